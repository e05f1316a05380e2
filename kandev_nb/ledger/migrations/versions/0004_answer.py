"""A turn's final answer: turns.answer (the main-thread text, secrets masked as in the prompt).

Revision ID: 0004
Revises: 0003

Rows of earlier releases read NULL: they kept no answer.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the column (plain ``ALTER TABLE ... ADD COLUMN``, also on SQLite)."""
    op.add_column("turns", sa.Column("answer", sa.Text))


def downgrade() -> None:
    """Drop the column again (the answers are lost)."""
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("answer")

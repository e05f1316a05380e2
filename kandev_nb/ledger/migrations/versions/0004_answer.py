"""A turn's final answer, turns.answer (the main-thread text, URL passwords masked), and the
input a call ran with when the person edited it before allowing, tool_calls.edited_input.

Revision ID: 0004
Revises: 0003

Rows of earlier releases read NULL: they kept neither.
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
    op.add_column("tool_calls", sa.Column("edited_input", sa.JSON))


def downgrade() -> None:
    """Drop the columns again (the answers and edits are lost)."""
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("edited_input")
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("answer")

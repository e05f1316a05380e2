"""A denial's reason: tool_calls.decision_message (the deny `message` sent to the CLI).

Revision ID: 0003
Revises: 0002

Rows of earlier releases read NULL: they kept no reason.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the column (plain ``ALTER TABLE ... ADD COLUMN``, also on SQLite)."""
    op.add_column("tool_calls", sa.Column("decision_message", sa.Text))


def downgrade() -> None:
    """Drop the column again (the reasons are lost)."""
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("decision_message")

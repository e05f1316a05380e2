"""A tool call's approval wait apart from its run time: tool_calls.approval_wait_ms.

Revision ID: 0006
Revises: 0005

From this revision on, ``tool_calls.duration_ms`` is the tool's own run time and
``approval_wait_ms`` the time its approval waited for an answer (a person, a timeout). Rows of
earlier releases read NULL there, and their ``duration_ms`` still includes the wait.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the column (plain ``ALTER TABLE ... ADD COLUMN``, also on SQLite)."""
    op.add_column("tool_calls", sa.Column("approval_wait_ms", sa.Integer))


def downgrade() -> None:
    """Drop the column again (the waits are lost)."""
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("approval_wait_ms")

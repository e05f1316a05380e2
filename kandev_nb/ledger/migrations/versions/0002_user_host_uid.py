"""Who and where: turns.user, turns.host; turns.turn_uid, the key that lands a spooled turn once.

Revision ID: 0002
Revises: 0001

Rows of earlier releases keep every value; their new columns are NULL (the release that
wrote them did not know the user). ``turn_uid`` is unique where set (NULLs do not clash).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the three columns (plain ``ALTER TABLE ... ADD COLUMN``, also on SQLite) and their indexes."""
    op.add_column("turns", sa.Column("user", sa.String))
    op.add_column("turns", sa.Column("host", sa.String))
    op.add_column("turns", sa.Column("turn_uid", sa.String(32)))
    op.create_index("ix_turns_user", "turns", ["user"])
    op.create_index("ix_turns_turn_uid", "turns", ["turn_uid"], unique=True)


def downgrade() -> None:
    """Drop the columns again (their values are lost)."""
    op.drop_index("ix_turns_turn_uid", "turns")
    op.drop_index("ix_turns_user", "turns")
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("turn_uid")
        batch.drop_column("host")
        batch.drop_column("user")

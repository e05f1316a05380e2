"""Where a turn's prompt came from: turns.prompt_uuid, origin_kind and origin.

Revision ID: 0007
Revises: 0006

``prompt_uuid`` is the `uuid` the prompt was sent to the CLI with (its entry in the CLI's
transcript, named again by the turn's result); ``origin_kind`` is "cell", "fleet_row" or
"python"; ``origin`` the whole stamp as JSON (notebook, cell id, ``In [n]``, fleet, row key,
whether the result named the prompt: :mod:`kandev_nb.agent.origin`). Rows of earlier releases
read NULL.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the three columns and an index on ``prompt_uuid`` (plain ``ALTER TABLE ... ADD COLUMN``)."""
    op.add_column("turns", sa.Column("prompt_uuid", sa.String))
    op.add_column("turns", sa.Column("origin_kind", sa.String))
    op.add_column("turns", sa.Column("origin", sa.JSON))
    op.create_index("ix_turns_prompt_uuid", "turns", ["prompt_uuid"])


def downgrade() -> None:
    """Drop them again (which cell or row sent a turn is lost)."""
    op.drop_index("ix_turns_prompt_uuid", "turns")
    with op.batch_alter_table("turns") as batch:
        for name in ("origin", "origin_kind", "prompt_uuid"):
            batch.drop_column(name)

"""A fleet's rows: turns.fleet, fleet_key, fleet_fingerprint and fleet_result.

Revision ID: 0005
Revises: 0003 (the lead chains it after 0004, a turn's answer text)

A turn run as one row of a fleet (:mod:`kandev_nb.fleet`) names the fleet, the row's key
(the frame's index value as JSON text), the fingerprint of the prompt template and options,
and the row's result (status, error, answer text, structured output) as JSON. Rows of
earlier releases, and every turn outside a fleet, read NULL.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the four columns and an index on ``fleet`` (plain ``ALTER TABLE ... ADD COLUMN``)."""
    op.add_column("turns", sa.Column("fleet", sa.String))
    op.add_column("turns", sa.Column("fleet_key", sa.Text))
    op.add_column("turns", sa.Column("fleet_fingerprint", sa.String))
    op.add_column("turns", sa.Column("fleet_result", sa.JSON))
    op.create_index("ix_turns_fleet", "turns", ["fleet"])


def downgrade() -> None:
    """Drop them again (which fleet a turn belonged to is lost)."""
    op.drop_index("ix_turns_fleet", "turns")
    with op.batch_alter_table("turns") as batch:
        for name in ("fleet_result", "fleet_fingerprint", "fleet_key", "fleet"):
            batch.drop_column(name)

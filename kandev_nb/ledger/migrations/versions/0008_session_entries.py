"""Transcripts mirrored to the ledger's database: the session_entries table.

Revision ID: 0008
Revises: 0007

One row per transcript entry a CLI started with ``--session-mirror`` appended
(:class:`kandev_nb.ledger.session_store.LedgerSessionStore`): the session's project key, id and
subpath ("" for its own transcript, ``subagents/agent-<id>`` for a subagent's), the entry's
``uuid`` (NULL for entries without one), the entry as JSON, and when it was stored. Entries
are read back in ``id`` order; a ``uuid`` is stored once per transcript.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the table and its indexes."""
    op.create_table(
        "session_entries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("project_key", sa.String, nullable=False),
        sa.Column("session_id", sa.String, nullable=False),
        sa.Column("subpath", sa.String, nullable=False, server_default=""),
        sa.Column("uuid", sa.String),
        sa.Column("entry", sa.JSON, nullable=False),
        sa.Column("stored_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_session_entries_session_id", "session_entries", ["session_id"])
    op.create_index(
        "ux_session_entries_uuid", "session_entries", ["project_key", "session_id", "subpath", "uuid"], unique=True
    )


def downgrade() -> None:
    """Drop the table (the mirrored transcripts are lost; local ones are not touched)."""
    op.drop_index("ux_session_entries_uuid", "session_entries")
    op.drop_index("ix_session_entries_session_id", "session_entries")
    op.drop_table("session_entries")

"""The schema of the releases before Alembic: turns, tool_calls, model_usage.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the three tables as the releases before Alembic did (``metadata.create_all``)."""
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True)),
        sa.Column("notebook", sa.Text),
        sa.Column("execution_count", sa.Integer),
        sa.Column("session_name", sa.String),
        sa.Column("session_id", sa.String),
        sa.Column("cwd", sa.Text),
        sa.Column("prompt", sa.Text),
        sa.Column("prompt_chars", sa.Integer),
        sa.Column("model", sa.String),
        sa.Column("models", sa.String),
        sa.Column("cost_usd", sa.Float),
        sa.Column("total_cost_usd", sa.Float),
        sa.Column("input_tokens", sa.Integer),
        sa.Column("output_tokens", sa.Integer),
        sa.Column("cache_read_input_tokens", sa.Integer),
        sa.Column("cache_creation_input_tokens", sa.Integer),
        sa.Column("duration_ms", sa.Integer),
        sa.Column("duration_api_ms", sa.Integer),
        sa.Column("approval_wait_ms", sa.Integer),
        sa.Column("num_turns", sa.Integer),
        sa.Column("tool_calls", sa.JSON),
        sa.Column("tool_call_count", sa.Integer),
        sa.Column("permission_denials", sa.Integer),
        sa.Column("is_error", sa.Boolean),
        sa.Column("result_subtype", sa.String),
        sa.Column("terminal_reason", sa.String),
        sa.Column("api_error_status", sa.Integer),
        sa.Column("error", sa.Text),
        sa.Column("last_message_uuid", sa.String),
        sa.Column("interrupted", sa.Boolean),
        sa.Column("cli_version", sa.String),
        sa.Column("kandev_nb_version", sa.String),
    )
    op.create_index("ix_turns_started_at", "turns", ["started_at"])
    op.create_index("ix_turns_notebook", "turns", ["notebook"])
    op.create_index("ix_turns_session_id", "turns", ["session_id"])
    op.create_table(
        "tool_calls",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("turn_id", sa.Integer, sa.ForeignKey("turns.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("tool_use_id", sa.String),
        sa.Column("parent_tool_use_id", sa.String),
        sa.Column("tool_name", sa.String),
        sa.Column("kind", sa.String),
        sa.Column("status", sa.String),
        sa.Column("duration_ms", sa.Integer),
        sa.Column("decision", sa.String),
        sa.Column("decided_by", sa.String),
    )
    op.create_index("ix_tool_calls_turn_id", "tool_calls", ["turn_id"])
    op.create_table(
        "model_usage",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("turn_id", sa.Integer, sa.ForeignKey("turns.id", ondelete="CASCADE"), nullable=False),
        sa.Column("model", sa.String),
        sa.Column("input_tokens", sa.Integer),
        sa.Column("output_tokens", sa.Integer),
        sa.Column("cache_read_input_tokens", sa.Integer),
        sa.Column("cache_creation_input_tokens", sa.Integer),
        sa.Column("cost_usd", sa.Float),
        sa.Column("context_window", sa.Integer),
    )
    op.create_index("ix_model_usage_turn_id", "model_usage", ["turn_id"])


def downgrade() -> None:
    """Drop the three tables (and every row in them)."""
    op.drop_table("model_usage")
    op.drop_table("tool_calls")
    op.drop_table("turns")

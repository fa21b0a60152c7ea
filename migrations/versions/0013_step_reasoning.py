"""What a step reasoned, the follow-ups it offered, and how a reply used the web.

A reasoning model's thoughts are kept with its step's text (shown folded, never replayed to the
model); the last step keeps the follow-up questions the model offered; a tool call keeps its
tool's grounding kind ("search", "read" or none), so a reply says how it used the web even
after the plugin that ran the call is gone; the reply keeps that summary beside its parts.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


# Plain ALTER TABLE, never a batch copy: on SQLite a copied ``messages`` table would be dropped,
# and dropping it cascades to every turn and unlinks every reply from its parent.


def upgrade():
    """Add ``turn_steps.reasoning`` and ``follow_ups``, ``tool_calls.grounding`` and
    ``messages.grounding``."""
    op.add_column(
        "turn_steps", sa.Column("reasoning", sa.Text(), nullable=False, server_default="")
    )
    op.add_column("turn_steps", sa.Column("follow_ups", sa.JSON(), nullable=True))
    op.add_column("tool_calls", sa.Column("grounding", sa.String(length=20), nullable=True))
    op.add_column("messages", sa.Column("grounding", sa.JSON(), nullable=True))


def downgrade():
    """Drop them (SQLite drops a column in place since 3.35)."""
    op.drop_column("messages", "grounding")
    op.drop_column("tool_calls", "grounding")
    op.drop_column("turn_steps", "follow_ups")
    op.drop_column("turn_steps", "reasoning")

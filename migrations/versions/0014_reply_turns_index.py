"""Indexes on the reply each turn writes and on open turns, so that neither is searched for
through the whole ``turns`` table.

Every model step reads the turns that wrote its reply (``core.turn.replies``: the turn and the
earlier turns of a continued reply, found by ``turns.assistant_message_id``), and deleting a
message sets that column to NULL in the turns that wrote it: without an index each read the
whole table, a cost that grew with every turn ever run. Every POST counts its user's open
turns (``core.turn_starts``): by status alone it read every user's open turns; an index of the
open turns by conversation, small as only open turns are in it, reads the user's alone.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

# core.models.chat.OPEN_TURNS as this revision knows it.
OPEN_TURNS = sa.text("status IN ('queued', 'running')")


def upgrade():
    """Add ``ix_turns_assistant_message_id`` and ``ix_turns_open_conversation_id``."""
    op.create_index("ix_turns_assistant_message_id", "turns", ["assistant_message_id"])
    op.create_index(
        "ix_turns_open_conversation_id",
        "turns",
        ["conversation_id", "status"],
        sqlite_where=OPEN_TURNS,
        postgresql_where=OPEN_TURNS,
    )


def downgrade():
    """Drop them."""
    op.drop_index("ix_turns_open_conversation_id", table_name="turns")
    op.drop_index("ix_turns_assistant_message_id", table_name="turns")

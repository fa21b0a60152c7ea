"""Each model step stores what it said: its text and the sources the model cited.

A reply's parts were built up in ``messages.parts`` as the turn went, and the tool results and
sources kept there were also kept in ``tool_calls``. Now a step stores its own output in
``turn_steps`` beside its calls, and the reply's parts are derived from the two
(``core/turn/replies.py``). Replies stored before keep their stored parts: the reply of an
ended turn is never derived again, so nothing needs filling in.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    """Add ``turn_steps``."""
    op.create_table(
        "turn_steps",
        sa.Column("turn_id", sa.String(length=32), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["turn_id"], ["turns.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("turn_id", "step"),
    )


def downgrade():
    """Drop ``turn_steps``; the replies keep their stored parts."""
    op.drop_table("turn_steps")

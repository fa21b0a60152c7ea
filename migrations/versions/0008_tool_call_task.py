"""Tool calls remember the task that claimed them: its retries run them again, no other does.

A tool call's task could be delivered twice (the reaper sends a waiting turn's calls again), and
each delivery ran the tool. Now a delivery claims the call with one conditional UPDATE and
stores its task id, so only that task's own retries and redeliveries run the call again.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade():
    """Add ``task_id``; calls stored before have none, so no delivery runs a started one again."""
    with op.batch_alter_table("tool_calls") as batch:
        batch.add_column(sa.Column("task_id", sa.String(length=64), nullable=True))


def downgrade():
    """Drop ``task_id``."""
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("task_id")

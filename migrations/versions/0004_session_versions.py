"""Sessions that end: a per-user session version kept in session cookies, and the last sign-in.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    """Add users.session_version (1 for everyone) and users.last_signed_in_at."""
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("session_version", sa.Integer(), nullable=False, server_default="1")
        )
        batch.add_column(sa.Column("last_signed_in_at", sa.DateTime(timezone=True)))


def downgrade():
    """Drop the two columns."""
    with op.batch_alter_table("users") as batch:
        batch.drop_column("last_signed_in_at")
        batch.drop_column("session_version")

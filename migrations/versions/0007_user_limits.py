"""Per-user limits: the values an admin set for one user in place of the QUOTA_* defaults.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade():
    """Create user_limits, one row per (user, setting) an admin overrode."""
    op.create_table(
        "user_limits",
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("setting", sa.String(length=100), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "setting"),
    )


def downgrade():
    """Drop user_limits."""
    op.drop_table("user_limits")

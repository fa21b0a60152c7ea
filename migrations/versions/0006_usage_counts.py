"""Usage counts: per user and UTC day, what was spent (turns, tokens, searches, pages, uploads).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    """Create the usage_counts table."""
    op.create_table(
        "usage_counts",
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("metric", sa.String(length=40), nullable=False),
        sa.Column("detail", sa.String(length=300), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "day", "metric", "detail"),
    )
    op.create_index("ix_usage_counts_day", "usage_counts", ["day"])


def downgrade():
    """Drop the usage_counts table."""
    op.drop_index("ix_usage_counts_day", table_name="usage_counts")
    op.drop_table("usage_counts")

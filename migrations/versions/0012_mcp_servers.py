"""MCP servers as tool sources: the servers an admin added, with their last tool listing.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade():
    """Create ``mcp_servers``."""
    op.create_table(
        "mcp_servers",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=True),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("command", sa.JSON(), nullable=False),
        sa.Column("allow_private", sa.Boolean(), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("listed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade():
    """Drop ``mcp_servers``."""
    op.drop_table("mcp_servers")

"""Uploads count their stored text: each keeps its text's length in characters.

An upload's room was its file's bytes, so a 4 KB PDF whose text is 2,000,000 characters took
4 KB of the user's room. Now it takes the larger of its bytes and its text's characters, and
the length is stored so that the room is summed without reading every text.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade():
    """Add ``text_chars`` and fill it for the uploads stored before."""
    with op.batch_alter_table("uploads") as batch:
        batch.add_column(sa.Column("text_chars", sa.Integer(), nullable=False, server_default="0"))
    op.execute("UPDATE uploads SET text_chars = length(text)")


def downgrade():
    """Drop ``text_chars``."""
    with op.batch_alter_table("uploads") as batch:
        batch.drop_column("text_chars")

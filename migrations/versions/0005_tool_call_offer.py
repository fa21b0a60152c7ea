"""Tool calls keep the tool as the step offered it: its owner and whether it is untrusted.

A tool-call task found its tool by working out the turn's whole offer again; now the step stores
the owner (``plugin``, or the tool source in the new ``source`` column, where it used to be a
``"source:<id>"`` prefix in ``plugin``) and the ``untrusted`` flag with each call.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

CALLS = sa.table(
    "tool_calls",
    sa.column("plugin", sa.String),
    sa.column("source", sa.String),
    sa.column("untrusted", sa.Boolean),
)
PREFIX = "source:"


def upgrade():
    """Add ``source`` and ``untrusted``; move the prefixed tool sources into ``source``."""
    with op.batch_alter_table("tool_calls") as batch:
        batch.add_column(sa.Column("source", sa.String(length=200), nullable=True))
        # Calls stored before knew no flag: replayed as untrusted, the safe reading.
        batch.add_column(
            sa.Column("untrusted", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    prefixed = CALLS.c.plugin.like(PREFIX + "%")
    op.execute(
        CALLS.update()
        .where(prefixed)
        .values(source=sa.func.substr(CALLS.c.plugin, len(PREFIX) + 1), plugin=None)
    )


def downgrade():
    """Put tool sources back into ``plugin`` with their prefix; drop the new columns."""
    op.execute(
        CALLS.update().where(CALLS.c.source.isnot(None)).values(plugin=PREFIX + CALLS.c.source)
    )
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("untrusted")
        batch.drop_column("source")

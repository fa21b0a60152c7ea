"""API token scopes and expiry: api_tokens.scopes (a JSON list) and api_tokens.expires_at.

Tokens made before this migration do NOT keep all of today's rights. Until now a token could do
whatever its account could: the chat API, the admin API (an administrator's token), making
more tokens, opening pages, changing the password and signing out. After the upgrade every
existing token holds the "chat" scope only and never expires: the programs that chat through
it keep working, while an existing administrator's token loses the admin API (a request there
answers 403 saying which scope is missing and how to make a token that has it). Nobody chose
the admin scope for those tokens, so none is assumed; an administrator who needs the admin API
from a program makes a new token with the admin scope. Browser actions (pages, making tokens,
the password form, signing out) are refused to every token whatever its scopes.

Downgrading drops both columns: the older code then gives every token its account's full
rights again, as before.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# What every token stored before this migration holds after it: see the docstring.
EXISTING_TOKEN_SCOPES = '["chat"]'


def upgrade():
    """Add api_tokens.scopes (["chat"] for every existing token) and api_tokens.expires_at."""
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(sa.Column("scopes", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    tokens = sa.table("api_tokens", sa.column("scopes", sa.JSON()))
    op.execute(tokens.update().values(scopes=sa.literal(["chat"], sa.JSON())))
    with op.batch_alter_table("api_tokens") as batch:
        batch.alter_column("scopes", existing_type=sa.JSON(), nullable=False)


def downgrade():
    """Drop both columns."""
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_column("expires_at")
        batch.drop_column("scopes")

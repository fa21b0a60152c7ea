"""Secrets at rest: encrypt the provider keys and plugin options and settings stored before.

The columns keep their types: an API key becomes an encrypted string in its text column, and a
plugin's options or a user's settings one encrypted string in their JSON column (see
core/models/encrypted.py). The key is the app's SECRETS_KEY, or SECRET_KEY.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

import json

import sqlalchemy as sa
from alembic import op
from flask import current_app

from core.models.encrypted import decrypt, encrypt, is_encrypted

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

PROVIDERS = sa.table("providers", sa.column("id", sa.String), sa.column("api_key", sa.Text))
OPTIONS = sa.table(
    "plugin_options", sa.column("plugin_id", sa.String), sa.column("options", sa.JSON)
)
SETTINGS = sa.table(
    "user_plugin_settings",
    sa.column("user_id", sa.String),
    sa.column("plugin_id", sa.String),
    sa.column("settings", sa.JSON),
)


def _rewrite(table, keys: list[str], column: str, change) -> None:
    """Set ``column`` to ``change(value)`` in every row where that returns something new."""
    bind = op.get_bind()
    key_columns = [table.c[k] for k in keys]
    for row in bind.execute(sa.select(*key_columns, table.c[column])).all():
        value = row[-1]
        new = change(value)
        if new is not value:
            where = sa.and_(*(c == row[i] for i, c in enumerate(key_columns)))
            bind.execute(table.update().where(where).values({column: new}))


def _seal_text(value):
    return encrypt(value) if value and not is_encrypted(value) else value


def _seal_document(value):
    return value if value is None or is_encrypted(value) else encrypt(json.dumps(value))


def _open_text(value):
    return (decrypt(value) or value) if is_encrypted(value) else value


def _open_document(value):
    if not is_encrypted(value):
        return value
    text = decrypt(value)
    return value if text is None else json.loads(text)


def _refuse_a_key_made_now() -> None:
    """Stop before encrypting anything under a SECRET_KEY this very command generated."""
    config = current_app.config
    if config.get("SECRETS_KEY") or not config.get("SECRET_KEY_MADE_NOW"):
        return
    bind = op.get_bind()
    stored = bind.execute(
        sa.select(sa.func.count()).select_from(PROVIDERS).where(PROVIDERS.c.api_key.is_not(None))
    ).scalar() + sum(
        bind.execute(sa.select(sa.func.count()).select_from(table)).scalar()
        for table in (OPTIONS, SETTINGS)
    )
    if stored:
        raise RuntimeError(
            "This upgrade encrypts the stored API keys and plugin settings, but SECRET_KEY is "
            "not set here and a new one was just made for this command, which the running app "
            "does not have. Run the upgrade with the app's SECRET_KEY (or SECRETS_KEY) set."
        )


def upgrade():
    """Encrypt every value stored in plain text."""
    _refuse_a_key_made_now()
    _rewrite(PROVIDERS, ["id"], "api_key", _seal_text)
    _rewrite(OPTIONS, ["plugin_id"], "options", _seal_document)
    _rewrite(SETTINGS, ["user_id", "plugin_id"], "settings", _seal_document)


def downgrade():
    """Decrypt every value this key opens (what it cannot open stays as it is)."""
    _rewrite(PROVIDERS, ["id"], "api_key", _open_text)
    _rewrite(OPTIONS, ["plugin_id"], "options", _open_document)
    _rewrite(SETTINGS, ["user_id", "plugin_id"], "settings", _open_document)

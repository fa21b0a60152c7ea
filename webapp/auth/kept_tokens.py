"""Bearer tokens with their users, kept per process until any process commits a change to a
user or a token (``core.kept``): one Redis GET a request where a join query was. The watch
stands with the models, in ``core.models.accounts``, so that every process that writes them
sets the version.

Every commit that wrote a user or a token row (created, revoked, a user disabled, deleted,
given a role, a password or new scopes; through the ORM's unit of work or a bulk statement)
sets ``VERSION_KEY`` anew. A token's expiry is checked on every request against the kept
``expires_at``; the once-a-minute ``last_used_at`` write is marked ``QUIET_WRITE`` and sets no
version. Each request gets its own detached copy of the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import inspect
from sqlalchemy.orm import make_transient_to_detached

from core.extensions import db
from core.kept import QUIET, change_kept, find_kept
from core.models import ApiToken, User
from core.models.accounts import ACCOUNTS_VERSION_KEY as VERSION_KEY
from core.models.accounts import hash_token

QUIET_WRITE = QUIET


@dataclass
class KeptToken:
    """One token's columns and its user's."""

    token: dict[str, Any]
    user: dict[str, Any]


def _columns(row: Any) -> dict[str, Any]:
    return {attr.key: getattr(row, attr.key) for attr in inspect(type(row)).column_attrs}


def _detached(model: type, values: dict[str, Any]) -> Any:
    """Return a row of its own for this request (lists copied), detached: no session holds it,
    and one request's changes to it never reach another's. Its columns are set as loaded,
    without the constructor's change tracking (a third of the cost)."""
    row = inspect(model).class_manager.new_instance()
    row.__dict__.update({key: list(v) if isinstance(v, list) else v for key, v in values.items()})
    make_transient_to_detached(row)
    return row


def _read(token_hash: str) -> KeptToken | None:
    found = db.session.execute(
        db.select(ApiToken, User)
        .join(User, ApiToken.user_id == User.id)
        .filter(ApiToken.token_hash == token_hash)
    ).first()
    if found is None:
        return None
    return KeptToken(_columns(found.ApiToken), _columns(found.User))


def find_token_with_user(token: str) -> tuple[ApiToken, User] | None:
    """Return the token's row and its user's, each this request's own detached copy, or None
    for an unknown token. Disabled users and expired tokens are returned too: the caller says
    what they mean."""
    token_hash = hash_token(token)
    found = find_kept(VERSION_KEY, token_hash, lambda: _read(token_hash))
    if found is None:
        return None
    return _detached(ApiToken, found.token), _detached(User, found.user)


def note_use(token: str, used_at) -> None:
    """Keep the ``last_used_at`` this process just wrote, so that it writes again only a
    minute later, without a version set for it."""
    change_kept(
        VERSION_KEY,
        hash_token(token),
        lambda found: found.token.__setitem__("last_used_at", used_at),
    )

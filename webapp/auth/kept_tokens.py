"""Bearer tokens with their users, kept per process until any process commits a change to a
user or a token: one Redis GET a request where a join query was.

Every commit that wrote a user or a token row (created, revoked, a user disabled, deleted,
given a role, a password or new scopes; through the ORM's unit of work or a bulk statement)
sets ``VERSION_KEY`` to a new random value after it commits, in whichever process made it.
A process compares that value with the one it read its rows at, once a request, and reads
again when they differ. A random value rather than a count: a Redis that restarted empty and
counted up again could repeat a version some process still holds. A token's expiry is checked
on every request against the kept ``expires_at``; the once-a-minute ``last_used_at`` write is
marked ``QUIET_WRITE`` and changes no version. Without Redis, every request reads the row, as
before; a process also reads again after ``KEPT_SECONDS`` whatever the version says, which
bounds how long a change whose version could not be raised (Redis down at that moment) goes
unseen.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import redis
from flask import current_app
from sqlalchemy import event, inspect
from sqlalchemy.orm import Session, make_transient_to_detached, object_session

from core.extensions import db, get_redis
from core.models import ApiToken, User
from core.models.accounts import hash_token

VERSION_KEY = "lookout:accounts:version"
QUIET_WRITE = "lookout_accounts_unchanged"
KEPT_SECONDS = 60.0
KEPT_MOST = 10_000  # tokens a process keeps; past it, it starts again (only real tokens count)
log = logging.getLogger("lookout.accounts")


@dataclass
class KeptToken:
    """One token's columns and its user's, as read at ``read_at`` (``time.monotonic``)."""

    token: dict[str, Any]
    user: dict[str, Any]
    read_at: float


class _Kept:
    """The tokens one app's process has read, with the version they were read at."""

    def __init__(self) -> None:
        self.version: bytes | None = None
        self.found: dict[str, KeptToken] = {}
        self.lock = threading.Lock()


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
    return KeptToken(_columns(found.ApiToken), _columns(found.User), time.monotonic())


def find_token_with_user(token: str) -> tuple[ApiToken, User] | None:
    """Return the token's row and its user's, each this request's own detached copy, or None
    for an unknown token. Disabled users and expired tokens are returned too: the caller says
    what they mean."""
    token_hash = hash_token(token)
    kept: _Kept = current_app.extensions.setdefault("lookout_kept_tokens", _Kept())
    try:
        version = get_redis().get(VERSION_KEY)
    except redis.RedisError:
        with kept.lock:
            kept.found, kept.version = {}, None  # what a lost change left behind, gone
        found = _read(token_hash)
    else:
        now = time.monotonic()
        with kept.lock:
            if version != kept.version:
                kept.found, kept.version = {}, version
            found = kept.found.get(token_hash)
        if found is None or now - found.read_at >= KEPT_SECONDS:
            found = _read(token_hash)
            if found is not None:
                with kept.lock:
                    if version == kept.version:  # read before the row: a later change reads again
                        if len(kept.found) >= KEPT_MOST:
                            kept.found = {}
                        kept.found[token_hash] = found
    if found is None:
        return None
    return _detached(ApiToken, found.token), _detached(User, found.user)


def note_use(token: str, used_at) -> None:
    """Keep the ``last_used_at`` this process just wrote, so that it writes again only a
    minute later, without a version raised for it."""
    kept: _Kept | None = current_app.extensions.get("lookout_kept_tokens")
    if kept is None:
        return
    with kept.lock:
        found = kept.found.get(hash_token(token))
        if found is not None:
            found.token["last_used_at"] = used_at


_CHANGED = "lookout_accounts_changed"
_WATCHED = (User, ApiToken)


@event.listens_for(User, "after_insert")
@event.listens_for(User, "after_update")
@event.listens_for(User, "after_delete")
@event.listens_for(ApiToken, "after_insert")
@event.listens_for(ApiToken, "after_update")
@event.listens_for(ApiToken, "after_delete")
def _note_flushed(_mapper, _connection, row) -> None:
    session = object_session(row)
    if session is not None:
        session.info[_CHANGED] = True


@event.listens_for(Session, "do_orm_execute")
def _note_bulk(state) -> None:
    if state.is_select or state.execution_options.get(QUIET_WRITE):
        return
    mapper = state.bind_mapper
    if mapper is not None and mapper.class_ in _WATCHED:
        state.session.info[_CHANGED] = True


@event.listens_for(Session, "after_commit")
def _tell_processes(session: Session) -> None:
    if not session.info.pop(_CHANGED, False):
        return
    try:
        kept: _Kept | None = current_app.extensions.get("lookout_kept_tokens")
        if kept is not None:
            with kept.lock:
                kept.found, kept.version = {}, None
        get_redis().set(VERSION_KEY, secrets.token_hex(8))
    except (redis.RedisError, RuntimeError, KeyError):
        log.error(
            "the accounts' version could not be raised: other web processes may accept a "
            "changed token or user for up to %d s",
            KEPT_SECONDS,
        )


@event.listens_for(Session, "after_rollback")
def _forget_changes(session: Session) -> None:
    session.info.pop(_CHANGED, None)

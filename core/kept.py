"""Rows a process keeps until any process commits a change to them: a Redis version key per
kind of row, set after every commit that wrote one (``watch``), and read before each use of
what is kept (``find_kept``).

A version is a new random value, not a count: a Redis that restarted empty and counted up
again could repeat a version some process still holds. Whatever a process keeps is also read
again after ``KEPT_SECONDS`` whatever the version says, which bounds how long a change whose
version could not be set (Redis down at that moment) goes unseen; a process that finds Redis
down forgets what it kept. A write marked ``QUIET`` in its execution options (bookkeeping such
as a token's last use) sets no version.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from flask import current_app
from sqlalchemy import event
from sqlalchemy.orm import Session, object_session

from core.extensions import get_redis

QUIET = "lookout_kept_unchanged"  # an execution option: this write sets no version
KEPT_SECONDS = 60.0
KEPT_MOST = 10_000  # entries of one kind a process keeps; past it, it starts again
log = logging.getLogger("lookout.kept")
_CHANGED = "lookout_kept_changed"  # session.info: the version keys its transaction must set
_WATCHED: dict[type, str] = {}


class _Kept:
    """What one app's process has read of one kind, with the version it was read at: each
    entry is (what was read, when: ``time.monotonic``)."""

    def __init__(self) -> None:
        self.version: bytes | None = None
        self.found: dict[Any, tuple[Any, float]] = {}
        self.lock = threading.Lock()

    def forget(self) -> None:
        with self.lock:
            self.found, self.version = {}, None


def _kept(version_key: str) -> _Kept:
    return current_app.extensions.setdefault(f"lookout_kept:{version_key}", _Kept())


def find_kept(version_key: str, key: Any, load: Callable[[], Any]) -> Any:
    """Return ``load()``'s answer for ``key``, read once per process until a commit sets
    ``version_key`` (or ``KEPT_SECONDS`` pass); one Redis GET a use. None is never kept;
    without Redis, ``load()``."""
    kept = _kept(version_key)
    try:
        version = get_redis().get(version_key)
    except redis.RedisError:
        kept.forget()  # what a change made meanwhile left behind, gone
        return load()
    now = time.monotonic()
    with kept.lock:
        if version != kept.version:
            kept.found, kept.version = {}, version
        entry = kept.found.get(key)
    if entry is not None and now - entry[1] < KEPT_SECONDS:
        return entry[0]
    found = load()
    if found is not None:
        with kept.lock:
            if version == kept.version:  # read before the rows: a later change reads them again
                if len(kept.found) >= KEPT_MOST:
                    kept.found = {}
                kept.found[key] = (found, now)
    return found


def change_kept(version_key: str, key: Any, change: Callable[[Any], None]) -> None:
    """Apply ``change`` to what this process keeps for ``key``, if it keeps anything: for
    bookkeeping it wrote itself with a ``QUIET`` write."""
    kept: _Kept | None = current_app.extensions.get(f"lookout_kept:{version_key}")
    if kept is None:
        return
    with kept.lock:
        entry = kept.found.get(key)
        if entry is not None:
            change(entry[0])


def new_version(version_key: str) -> None:
    """Set ``version_key`` anew (a random value: see the module's docstring), for what is kept
    by its own rules rather than ``find_kept``'s; raises redis.RedisError."""
    get_redis().set(version_key, secrets.token_hex(8))


def watch(model: type, version_key: str) -> None:
    """Set ``version_key`` anew after every commit that inserted, updated or deleted a
    ``model`` row, one at a time or in bulk (unless the bulk statement is ``QUIET``)."""
    _WATCHED[model] = version_key
    for name in ("after_insert", "after_update", "after_delete"):
        event.listen(model, name, _note_flushed)


def _note_flushed(mapper, _connection, target) -> None:
    session = object_session(target)
    if session is not None:
        session.info.setdefault(_CHANGED, set()).add(_WATCHED[mapper.class_])


@event.listens_for(Session, "do_orm_execute")
def _note_bulk(state) -> None:
    if state.is_select or state.execution_options.get(QUIET):
        return
    mapper = state.bind_mapper
    if mapper is not None and mapper.class_ in _WATCHED:
        state.session.info.setdefault(_CHANGED, set()).add(_WATCHED[mapper.class_])


@event.listens_for(Session, "after_commit")
def _tell_processes(session: Session) -> None:
    keys = session.info.pop(_CHANGED, None)
    if not keys:
        return
    try:
        for version_key in keys:  # this process sees its own change even without Redis
            _kept(version_key).forget()
        with get_redis().pipeline(transaction=False) as pipe:
            for version_key in sorted(keys):
                pipe.set(version_key, secrets.token_hex(8))  # as new_version
            pipe.execute()
    except (redis.RedisError, RuntimeError, KeyError):
        log.error(
            "%s could not be set: other processes may use the rows as they were for up to %d s",
            ", ".join(sorted(keys)),
            KEPT_SECONDS,
        )


@event.listens_for(Session, "after_rollback")
def _forget_changes(session: Session) -> None:
    session.info.pop(_CHANGED, None)

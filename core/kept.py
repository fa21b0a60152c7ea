"""Rows a process keeps until any process commits a change to them: a Redis version key per
kind of row, raised after every commit that wrote one (``watch``), and read before each use
of what is kept (``find_kept``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import redis
from flask import current_app
from sqlalchemy import event
from sqlalchemy.orm import Session, object_session

from core.extensions import get_redis

log = logging.getLogger("lookout.kept")
_CHANGED = "lookout_kept_changed"  # session.info: the version keys its transaction must raise
_WATCHED: dict[type, str] = {}


class _Kept:
    """What one app's process has read of one kind, with the version it was read at."""

    def __init__(self) -> None:
        self.version: bytes | None = None
        self.found: dict[Any, Any] = {}
        self.lock = threading.Lock()


def find_kept(version_key: str, key: Any, load: Callable[[], Any]) -> Any:
    """Return ``load()``'s answer for ``key``, read once per process until a commit raises
    ``version_key``; one Redis GET a use. None is never kept; without Redis, ``load()``."""
    kept: _Kept = current_app.extensions.setdefault(f"lookout_kept:{version_key}", _Kept())
    try:
        version = get_redis().get(version_key)
    except redis.RedisError:
        return load()
    with kept.lock:
        if version != kept.version:
            kept.found, kept.version = {}, version
        found = kept.found.get(key)
    if found is not None:
        return found
    found = load()
    if found is not None:
        with kept.lock:
            if version == kept.version:  # read before the rows: a later change reads them again
                kept.found[key] = found
    return found


def watch(model: type, version_key: str) -> None:
    """Raise ``version_key`` after every commit that inserted, updated or deleted a ``model``
    row, one at a time or in bulk."""
    _WATCHED[model] = version_key
    for name in ("after_insert", "after_update", "after_delete"):
        event.listen(model, name, _note_flushed)


def _note_flushed(mapper, _connection, target) -> None:
    session = object_session(target)
    if session is not None:
        session.info.setdefault(_CHANGED, set()).add(_WATCHED[mapper.class_])


@event.listens_for(Session, "do_orm_execute")
def _note_bulk(state) -> None:
    if state.is_select:
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
        with get_redis().pipeline(transaction=False) as pipe:
            for version_key in sorted(keys):
                pipe.incr(version_key)
            pipe.execute()
    except (redis.RedisError, RuntimeError, KeyError):
        log.warning("%s could not be raised: processes keep the old rows", ", ".join(keys))


@event.listens_for(Session, "after_rollback")
def _forget_changes(session: Session) -> None:
    session.info.pop(_CHANGED, None)

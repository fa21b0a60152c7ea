"""Rows a process keeps until any process commits a change to them: a Redis version key per
kind of row, set after every commit that wrote one (``watch``), and read before each use of
what is kept (``find_kept``).

A version is a new random value, not a count: a Redis that restarted empty and counted up
again could repeat a version some process still holds. Whatever a process keeps is also read
again after ``KEPT_SECONDS`` whatever the version says, which bounds how long a change whose
version could not be set (Redis down at that moment) goes unseen; a process that finds Redis
down forgets what it kept. A write marked ``QUIET`` in its execution options (bookkeeping such
as a token's last use) sets no version.

Inside ``versions_read_once`` (a model step), the first look at a version reads every known
version key in one MGET and later looks use it: a step looked at the plugins', the providers'
and the users' limits' versions with a GET each. A step's task sends that MGET in the round
trip that clears its queued marker as it starts (``read_versions_in``), before any look.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import redis
from flask import current_app
from redis.client import Pipeline
from sqlalchemy import event
from sqlalchemy.orm import Session, object_session

from core.extensions import get_redis

QUIET = "lookout_kept_unchanged"  # an execution option: this write sets no version
KEPT_SECONDS = 60.0
KEPT_MOST = 10_000  # entries of one kind a process keeps; past it, it starts again
log = logging.getLogger("lookout.kept")
_CHANGED = "lookout_kept_changed"  # session.info: the version keys its transaction must set
_WATCHED: dict[type, str] = {}
_KNOWN: set[str] = set()  # every version key looked at or watched: what one MGET reads
# Within ``versions_read_once``: the versions read so far, by key.
_READ: ContextVar[dict[str, bytes | None] | None] = ContextVar("lookout_kept_read", default=None)


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


def known(version_key: str) -> str:
    """Return ``version_key``, added to those ``versions_read_once``'s MGET reads (a watched
    model's is added by ``watch``)."""
    _KNOWN.add(version_key)
    return version_key


@contextmanager
def versions_read_once() -> Iterator[None]:
    """Within it, every version key is read from Redis once, all in one MGET, at the first
    look at any (``current_version``); what this process commits meanwhile it sees at once,
    what another commits meanwhile from the next ``versions_read_once`` (the next step) on."""
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def read_versions_in(pipe: Pipeline) -> Callable[[Any], None] | None:
    """Queue in ``pipe`` the MGET that the first look at a version inside ``versions_read_once``
    would send, so that a round trip made anyway carries it (a task's clearing of its queued
    marker, ``workers.turn_task``); return what takes the pipeline's answer to it (an error
    answer leaves the first look to read them), or None outside ``versions_read_once``."""
    read = _READ.get()
    if read is None or not _KNOWN:
        return None
    keys = sorted(_KNOWN)
    pipe.mget(keys)

    def take(answer: Any) -> None:
        if isinstance(answer, list) and len(answer) == len(keys):
            read.update(zip(keys, answer, strict=True))

    return take


def current_version(version_key: str) -> bytes | None:
    """Return the version stored at ``version_key`` (None when unset): one GET, or inside
    ``versions_read_once`` what its one MGET read; raises redis.RedisError."""
    _KNOWN.add(version_key)
    read = _READ.get()
    if read is None:
        return get_redis().get(version_key)
    if version_key not in read:
        keys = sorted(_KNOWN)
        read.update(zip(keys, get_redis().mget(keys), strict=True))
    return read[version_key]


def find_kept(version_key: str, key: Any, load: Callable[[], Any]) -> Any:
    """Return ``load()``'s answer for ``key``, read once per process until a commit sets
    ``version_key`` (or ``KEPT_SECONDS`` pass); one Redis GET a use (``current_version``).
    None is never kept; without Redis, ``load()``."""
    kept = _kept(version_key)
    try:
        version = current_version(version_key)
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
    _set_versions([version_key])


def _set_versions(keys: list[str]) -> None:
    new = {version_key: secrets.token_hex(8) for version_key in keys}
    read = _READ.get()
    if read is not None:
        for version_key in keys:  # until they are set: read again at the next look
            read.pop(version_key, None)
    with get_redis().pipeline(transaction=False) as pipe:
        for version_key, version in new.items():
            pipe.set(version_key, version)
        pipe.execute()
    if read is not None:
        read.update(new)


def watch(model: type, version_key: str) -> None:
    """Set ``version_key`` anew after every commit that inserted, updated or deleted a
    ``model`` row, one at a time or in bulk (unless the bulk statement is ``QUIET``)."""
    _WATCHED[model] = known(version_key)
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
        _set_versions(sorted(keys))
    except (redis.RedisError, RuntimeError, KeyError):
        log.error(
            "%s could not be set: other processes may use the rows as they were for up to %d s",
            ", ".join(sorted(keys)),
            KEPT_SECONDS,
        )


@event.listens_for(Session, "after_rollback")
def _forget_changes(session: Session) -> None:
    session.info.pop(_CHANGED, None)

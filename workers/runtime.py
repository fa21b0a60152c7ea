"""Per-process parts of a worker: the cancel watcher, heartbeats and provider clients."""

from __future__ import annotations

import threading
import time

from flask import current_app
from sqlalchemy import update

from webapp.extensions import db
from webapp.models import Provider, Turn
from webapp.models.base import utcnow
from webapp.turnstate import get_redis
from workers.providers import OpenAICompatibleProvider
from workers.watch import CancelWatcher

HEARTBEAT_SECONDS = 5.0  # at most; a quarter of TURN_STALE_SECONDS when that is shorter

_lock = threading.Lock()
_last_beat: dict[str, float] = {}
_providers: dict[tuple[str, str, str | None], OpenAICompatibleProvider] = {}


def get_watcher() -> CancelWatcher:
    """Return this app's cancel watcher, started on first use."""
    watcher = current_app.extensions.get("lookout_cancel_watcher")
    if watcher is None:
        with _lock:
            watcher = current_app.extensions.get("lookout_cancel_watcher")
            if watcher is None:
                watcher = CancelWatcher(get_redis())
                current_app.extensions["lookout_cancel_watcher"] = watcher
    return watcher


def beat(turn_id: str, force: bool = False) -> None:
    """Record that the turn's work is alive, at most every few seconds per turn."""
    now = time.monotonic()
    interval = min(HEARTBEAT_SECONDS, current_app.config["TURN_STALE_SECONDS"] / 4)
    with _lock:
        if not force and now - _last_beat.get(turn_id, 0.0) < interval:
            return
        _last_beat[turn_id] = now
    db.session.execute(
        update(Turn)
        .where(Turn.id == turn_id, Turn.status == "running")
        .values(heartbeat_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def note_beat(turn_id: str) -> None:
    """Record that the turn's heartbeat was just written (a step's claim writes it)."""
    with _lock:
        _last_beat[turn_id] = time.monotonic()


def forget_beat(turn_id: str) -> None:
    """Drop the turn's heartbeat bookkeeping once it ended."""
    with _lock:
        _last_beat.pop(turn_id, None)


def get_provider(provider: Provider) -> OpenAICompatibleProvider:
    """Return a client for the provider, reused while its URL and key stay the same."""
    cache_key = (provider.name, provider.base_url, provider.api_key)
    with _lock:
        client = _providers.get(cache_key)
        if client is None:
            client = OpenAICompatibleProvider(
                name=provider.name, base_url=provider.base_url, api_key=provider.api_key or ""
            )
            _providers[cache_key] = client
    return client

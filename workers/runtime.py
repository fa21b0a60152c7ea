"""Per-process parts of a worker: the cancel watcher with its heartbeats, provider clients, the
parser processes started when the worker is ready, and what it has loaded by then frozen."""

from __future__ import annotations

import gc
import threading

from celery.signals import worker_ready
from flask import Flask, current_app

from core.extensions import db, get_redis
from core.models import Provider
from core.plugin_host import get_parsers
from core.turn.lifecycle import record_heartbeats
from workers.providers import OpenAICompatibleProvider
from workers.watch import TEXT_BATCH_SECONDS, TurnWatcher

HEARTBEAT_SECONDS = 5.0  # at most; a quarter of TURN_STALE_SECONDS when that is shorter

_lock = threading.Lock()
_providers: dict[tuple[str, str, str | None], OpenAICompatibleProvider] = {}


def get_watcher() -> TurnWatcher:
    """Return this app's cancel watcher, which also beats for its turns; started on first use."""
    app = current_app._get_current_object()
    watcher = app.extensions.get("lookout_cancel_watcher")
    if watcher is None:
        with _lock:
            watcher = app.extensions.get("lookout_cancel_watcher")
            if watcher is None:
                interval = min(HEARTBEAT_SECONDS, app.config["TURN_STALE_SECONDS"] / 4)
                watcher = TurnWatcher(
                    get_redis(),
                    beat=lambda turn_ids: beat(app, turn_ids),
                    beat_seconds=interval,
                )
                app.extensions["lookout_cancel_watcher"] = watcher
    return watcher


def beat(app: Flask, turn_ids: list[str]) -> None:
    """Record that work on these running turns is alive (one statement for all of them)."""
    with app.app_context():
        try:
            record_heartbeats(turn_ids)
        finally:
            db.session.remove()


def provider_client(provider: Provider) -> OpenAICompatibleProvider:
    """Return a client for the provider, reused while its URL and key stay the same."""
    cache_key = (provider.name, provider.base_url, provider.api_key)
    with _lock:
        client = _providers.get(cache_key)
        if client is None:
            client = OpenAICompatibleProvider(
                name=provider.name,
                base_url=provider.base_url,
                api_key=provider.api_key or "",
                timeout=current_app.config["MODEL_TIMEOUT_SECONDS"],
                first_token_timeout=current_app.config["MODEL_TIMEOUT_SECONDS"],
                answer_timeout=current_app.config["MODEL_ANSWER_SECONDS"],
                read_interval=TEXT_BATCH_SECONDS,  # the tokens of a batch in one read
            )
            _providers[cache_key] = client
    return client


@worker_ready.connect
def start_parsers(**_kwargs) -> None:
    """Start the parser processes now, so that the first page read does not wait for them."""
    from workers.celery_app import get_flask_app

    with get_flask_app().app_context():
        get_parsers().warm()


@worker_ready.connect
def freeze_loaded(**_kwargs) -> None:
    """Leave what the worker has loaded once ready (its modules, the Flask and Celery apps,
    SQLAlchemy's mappers, the plugins' schemas) out of the cycle collector's walks: every full
    collection of a turn walked them all, and they live as long as the process. The
    collection first frees the start-up's garbage, which would otherwise stay for good."""
    from workers.celery_app import get_flask_app

    get_flask_app()
    gc.collect()
    gc.freeze()

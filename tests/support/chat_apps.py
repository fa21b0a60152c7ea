"""A chat tests' app whose worker reads the tests' loopback sites, closed when its tests end."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask

from core.extensions import db
from tests.workers.conftest import make_chat_app


@contextmanager
def loopback_chat_app(
    tmp_path_factory, redis_url: str, sqlite_template, plugins: str, **settings: object
) -> Iterator[Flask]:
    """Yield an app for chat tests (``make_chat_app``) with ``plugins`` (LOOKOUT_PLUGINS) and
    private addresses allowed, since the worker, another process, reads loopback sites; its
    database's connections are closed after."""
    app = make_chat_app(
        tmp_path_factory,
        redis_url,
        sqlite_template,
        LOOKOUT_PLUGINS=plugins,
        ALLOW_PRIVATE_NETWORKS=True,
        **settings,
    )
    try:
        yield app
    finally:
        with app.app_context():
            db.engine.dispose()

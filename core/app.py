"""The core app: a Flask app with Lookout's settings, database, Redis and plugin host — what a
worker runs its tasks in, and what ``webapp.create_app`` adds its pages and APIs to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from core import config as settings

MIGRATIONS_DIR = str(settings.ROOT / "migrations")


def create_app(config: Mapping[str, Any] | None = None, import_name: str = __name__) -> Flask:
    """Return the core app; config overrides the environment (tests pass settings here), and
    ``import_name`` is the package whose templates and static files the app serves, if any."""
    app = Flask(import_name, instance_path=str(settings.INSTANCE_DIR))
    config = dict(config or {})
    values = settings.load_config(overrides=config)
    app.config.update(config)
    app.config.update(values)
    app.config["SQLALCHEMY_DATABASE_URI"] = values["DATABASE_URL"]
    pool = values["DATABASE_POOL_SIZE"]
    # No pre-ping on every checkout: ``ping_when_idle`` checks only connections left unused a
    # while, and LIFO keeps the same few in use, so that under load none sits idle.
    app.config.setdefault(
        "SQLALCHEMY_ENGINE_OPTIONS",
        {"pool_size": pool, "max_overflow": pool, "pool_use_lifo": True},
    )
    app.config["MAX_CONTENT_LENGTH"] = values["ATTACHMENT_MAX_BYTES"] + 1024 * 1024
    settings.configure_logging(values["LOG_LEVEL"])

    # Imported here so that `import core.config` (./run's settings check) stays light.
    from core import metrics, models, plugin_host  # noqa: F401  (models: every table registered)
    from core.extensions import db, init_redis, migrate, ping_when_idle
    from core.turn import queued

    db.init_app(app)
    with app.app_context():
        if db.engine.dialect.name != "sqlite":  # a file, with no server to restart or drop it
            ping_when_idle(db.engine)
    migrate.init_app(app, db, directory=MIGRATIONS_DIR)
    init_redis(app)
    queued.init_app(app)
    plugin_host.init_plugins(app)
    metrics.count_plugin_events()
    return app

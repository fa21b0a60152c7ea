"""Lookout's web app: `create_app()` builds the Flask app from the environment and overrides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from webapp import config as settings

MIGRATIONS_DIR = str(settings.ROOT / "migrations")


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Return a configured app; config overrides the environment (tests pass settings here)."""
    app = Flask(__name__, instance_path=str(settings.INSTANCE_DIR))
    config = dict(config or {})
    values = settings.load_config(overrides=config)
    app.config.update(config)
    app.config.update(values)
    app.config["SQLALCHEMY_DATABASE_URI"] = values["DATABASE_URL"]
    pool = values["DATABASE_POOL_SIZE"]
    app.config.setdefault(
        "SQLALCHEMY_ENGINE_OPTIONS",
        {"pool_pre_ping": True, "pool_size": pool, "max_overflow": pool},
    )
    app.config["MAX_CONTENT_LENGTH"] = values["ATTACHMENT_MAX_BYTES"] + 1024 * 1024
    settings.configure_logging(values["LOG_LEVEL"])

    # Imported here so that `import webapp.config` (./run's settings check) stays light.
    from webapp.extensions import db, migrate

    db.init_app(app)
    migrate.init_app(app, db, directory=MIGRATIONS_DIR)
    register_parts(app)
    return app


def register_parts(app: Flask) -> None:
    """Attach security headers, sessions, error handlers, blueprints, the queue and commands."""
    from webapp import health, metrics_endpoint, models, openai_api, plugin_host, queue  # noqa: F401
    from webapp.api import register_api
    from webapp.auth import commands, sessions, views
    from webapp.errors import register_error_handlers
    from webapp.mcp import server as mcp_server
    from webapp.pages import BLUEPRINTS as PAGES
    from webapp.security import init_security
    from webapp.turn import queued
    from webapp.turn import state as turn_state

    init_security(app)
    sessions.init_sessions(app)
    register_error_handlers(app)
    for blueprint in (views.bp, *PAGES):
        app.register_blueprint(blueprint)
    health.init_health(app)
    metrics_endpoint.init_metrics(app)
    register_api(app)
    openai_api.init_openai_api(app)
    app.register_blueprint(mcp_server.bp)
    queue.init_queue(app)
    turn_state.init_redis(app)
    queued.init_app(app)
    plugin_host.init_plugins(app)
    commands.init_commands(app)
    app.jinja_env.globals["app_name"] = app.config["APP_NAME"]

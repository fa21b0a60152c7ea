"""Lookout's web app: `create_app()` builds the core app and adds the pages and APIs to it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from core import app as core_app


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Return the web app; config overrides the environment (tests pass settings here)."""
    app = core_app.create_app(config, import_name=__name__)
    register_parts(app)
    return app


def register_parts(app: Flask) -> None:
    """Attach security headers, sessions, error handlers, blueprints, the queue and commands."""
    from webapp import health, metrics_endpoint, openai_api, queue
    from webapp.api import register_api
    from webapp.auth import commands, sessions, views
    from webapp.errors import register_error_handlers
    from webapp.mcp import server as mcp_server
    from webapp.pages import BLUEPRINTS as PAGES
    from webapp.security import init_security

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
    commands.init_commands(app)
    app.jinja_env.globals["app_name"] = app.config["APP_NAME"]

"""The JSON API under /api/: one blueprint per area, registered together here."""

from flask import Flask

from webapp.api import (
    accounts,
    bodies,
    continuations,
    conversations,
    health,
    mcp_servers,
    openapi,
    plugin_trials,
    plugins,
    providers,
    tokens,
    turns,
    uploads,
    usage,
    user_limits,
    users,
)

BLUEPRINTS = (
    accounts.bp,
    tokens.bp,
    plugins.bp,
    plugin_trials.bp,
    providers.bp,
    conversations.bp,
    turns.bp,
    continuations.bp,
    uploads.bp,
    health.bp,
    users.bp,
    usage.bp,
    user_limits.bp,
    mcp_servers.bp,
    openapi.bp,
)


def register_api(app: Flask) -> None:
    """Register every API blueprint, and the check of request bodies before them."""
    bodies.init_bodies(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)

"""The JSON API under /api/: one blueprint per area, registered together here."""

from flask import Flask

from webapp.api import (
    accounts,
    conversations,
    health,
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
    providers.bp,
    conversations.bp,
    turns.bp,
    uploads.bp,
    health.bp,
    users.bp,
    usage.bp,
    user_limits.bp,
)


def register_api(app: Flask) -> None:
    """Register every API blueprint."""
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)

"""The JSON API under /api/: one blueprint per area, registered together here."""

from flask import Flask

from webapp.api import accounts, tokens

BLUEPRINTS = (accounts.bp, tokens.bp)


def register_api(app: Flask) -> None:
    """Register every API blueprint."""
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)

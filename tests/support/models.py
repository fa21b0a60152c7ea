"""Providers and the model settings an admin ticks on the Providers page, stored straight in the
database."""

from __future__ import annotations

from flask import Flask

from core.extensions import db
from core.models import Provider


def ask_for_follow_ups(app: Flask, model_id: str) -> None:
    """Tick Follow-ups (``followUps``) for the model ``provider/name``."""
    name, _, model = model_id.partition("/")
    with app.app_context():
        provider = db.session.scalar(db.select(Provider).filter_by(name=name))
        provider.models = [
            {**m, "followUps": True} if m["name"] == model else m for m in provider.models
        ]
        db.session.commit()


def unanswered_model(app: Flask) -> str:
    """Store a provider ``local`` with one model on an address nothing answers (no turn of it
    is ever run) and return the model's id, ``local/m``."""
    with app.app_context():
        db.session.add(
            Provider(name="local", base_url="http://127.0.0.1:9/v1", models=[{"name": "m"}])
        )
        db.session.commit()
    return "local/m"


def add_fake_provider(app: Flask, base_url: str) -> str:
    """Store a provider ``fake`` at ``base_url`` (a FakeModel's) with one model that takes
    tools, and return the model's id, ``fake/m``."""
    with app.app_context():
        db.session.add(
            Provider(name="fake", base_url=base_url, models=[{"name": "m", "tools": True}])
        )
        db.session.commit()
    return "fake/m"

"""Model settings an admin ticks on the Providers page, stored straight in the database."""

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

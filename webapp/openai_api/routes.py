"""The blueprint every ``/v1/`` view is registered on."""

from __future__ import annotations

from flask import Blueprint

bp = Blueprint("openai", __name__, url_prefix="/v1")

"""The admins' view of health over the API: each part, whether it is up, and why not."""

from __future__ import annotations

from flask import Blueprint, jsonify

from webapp.api.operations import operation
from webapp.api.schemas.health import HealthSchema
from webapp.auth.guards import admin_required
from webapp.health import health_details

bp = Blueprint("api_health", __name__, url_prefix="/api/admin/health")


@bp.get("")
@admin_required
@operation(answers={200: HealthSchema, 503: HealthSchema})
def show_health():
    """Return {ok, checks: {part: {ok, error, checkedSecondsAgo}}}; 503 when a part is down."""
    details, ok = health_details()
    return jsonify(HealthSchema().dump(details)), 200 if ok else 503

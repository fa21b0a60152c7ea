"""The admin area's front page, linking to its other pages, and the health details page."""

from __future__ import annotations

from flask import Blueprint, render_template

from webapp.auth.guards import admin_required
from webapp.health import health_details

bp = Blueprint("admin", __name__, url_prefix="/admin")


@bp.get("/", endpoint="index")
@admin_required
def show_admin():
    """Show the admin area (admins only)."""
    return render_template("admin/index.html")


@bp.get("/health", endpoint="health")
@admin_required
def show_health():
    """Show each part's state with the reason when it is down (admins only; /healthz has none)."""
    details, ok = health_details()
    return render_template("admin/health.html", details=details, ok=ok)

"""The admin area's front page, linking to its other pages."""

from __future__ import annotations

from flask import Blueprint, render_template

from webapp.auth.guards import admin_required

bp = Blueprint("admin", __name__, url_prefix="/admin")


@bp.get("/", endpoint="index")
@admin_required
def show_admin():
    """Show the admin area (admins only)."""
    return render_template("admin/index.html")

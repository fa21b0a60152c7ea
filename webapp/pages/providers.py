"""The admins' model providers page: a server-rendered shell over /api/admin/providers.

Its script (static/providers.js) lists, adds, edits, deletes and tests providers through the JSON
API in webapp/api/providers.py; keys are write-only there, so the page never holds one.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for

from webapp.auth.guards import admin_required

bp = Blueprint("admin_providers", __name__, url_prefix="/admin/providers")


@bp.get("", endpoint="index")
@admin_required
def show_providers():
    """Show every provider with its models and whether a key is set (admins only)."""
    return render_template("admin/providers.html", api_url=url_for("api_providers.list_providers"))

"""The admins' Users page: a server-rendered shell over /api/admin/users.

Its script (static/users.js) lists the accounts and creates, disables and enables them, grants
and takes the admin role, and sets passwords, through webapp/api/users.py; a generated password
is shown once, right after it is made. The table's columns are one list in the script, so
columns to come (usage this month, limit overrides) are one entry each.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for
from flask_login import current_user

from webapp.auth.guards import admin_required

bp = Blueprint("admin_users", __name__, url_prefix="/admin/users")


@bp.get("", endpoint="index")
@admin_required
def show_users():
    """Show every account with what an admin may do to it (admins only)."""
    return render_template(
        "admin/users.html", api_url=url_for("api_users.list_users"), me=current_user.id
    )

"""The signed-in home page (to become the chat) and the admin page."""

from __future__ import annotations

from flask import Blueprint, render_template

from webapp.auth.guards import admin_required, login_required

home = Blueprint("home", __name__)
admin = Blueprint("admin", __name__, url_prefix="/admin")


@home.get("/")
@login_required
def index():
    """Show the home page with the user's name and a sign-out button."""
    return render_template("home/index.html")


@admin.get("/", endpoint="index")
@admin_required
def index_admin():
    """Show the admin area (admins only)."""
    return render_template("admin/index.html")

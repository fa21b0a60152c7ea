"""The signed-in home page (the chat) and the admin page."""

from __future__ import annotations

from flask import Blueprint, render_template

from webapp.auth.guards import admin_required, login_required

home = Blueprint("home", __name__)
admin = Blueprint("admin", __name__, url_prefix="/admin")


@home.get("/")
@login_required
def index():
    """Show the chat: the page's scripts (static/chat*.js) drive it through the JSON API."""
    return render_template("chat/index.html")


@admin.get("/", endpoint="index")
@admin_required
def index_admin():
    """Show the admin area (admins only)."""
    return render_template("admin/index.html")

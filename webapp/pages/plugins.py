"""The pages for plugins: each user's settings and the admins' plugin options.

Both are server-rendered shells; their scripts (static/settings.js, static/admin_plugins.js)
fetch the JSON API in webapp/api/plugins.py and build the forms with static/forms.js.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for

from webapp.auth.guards import admin_required, login_required
from webapp.pages.account import render_settings

settings = Blueprint("settings", __name__, url_prefix="/settings")
admin_plugins = Blueprint("admin_plugins", __name__, url_prefix="/admin/plugins")


@settings.get("", endpoint="index")
@login_required
def show_settings():
    """Show the signed-in user's tool switches, plugin settings and the Account section."""
    return render_settings()


@admin_plugins.get("", endpoint="index")
@admin_required
def show_admin_plugins():
    """Show every listed plugin's status and options form (admins only)."""
    return render_template("admin/plugins.html", api_url=url_for("api_plugins.list_plugins"))

"""The signed-in home page: the chat."""

from __future__ import annotations

from flask import Blueprint, render_template

from webapp.auth.guards import login_required

bp = Blueprint("home", __name__)


@bp.get("/", endpoint="index")
@login_required
def show_chat():
    """Show the chat: the page's scripts (static/chat*.js) drive it through the JSON API."""
    return render_template("chat/index.html")

"""Each user's API tokens page: a server-rendered shell over /api/tokens.

Its script (static/tokens.js) lists, creates and revokes the signed-in user's tokens; a new
token's value is shown once, right after it is created, and never again.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for

from webapp.auth.guards import login_required

bp = Blueprint("tokens_page", __name__, url_prefix="/settings/tokens")


@bp.get("", endpoint="index")
@login_required
def show_tokens():
    """Show the signed-in user's API tokens, with a form to create one."""
    return render_template("settings/tokens.html", api_url=url_for("api_tokens.list_tokens"))

"""Each user's API tokens page: a server-rendered shell over /api/tokens.

Its script (static/tokens.js) lists, creates and revokes the signed-in user's tokens; a new
token's value is shown once, right after it is created, and never again.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for
from flask_login import current_user

from core.scopes import DEFAULT_SCOPES, SCOPES, scopes_allowed
from webapp.auth.guards import login_required

bp = Blueprint("tokens_page", __name__, url_prefix="/settings/tokens")
# The expiries offered (days; None: never); the API takes any number of days.
EXPIRIES = [
    (7, "in 7 days"),
    (30, "in 30 days"),
    (90, "in 90 days"),
    (365, "in a year"),
    (None, "never"),
]


@bp.get("", endpoint="index")
@login_required
def show_tokens():
    """Show the signed-in user's API tokens, with a form to create one: its name, the scopes
    this account may give it, and when it expires."""
    return render_template(
        "settings/tokens.html",
        api_url=url_for("api_tokens.list_tokens"),
        scopes=[(scope, SCOPES[scope]) for scope in scopes_allowed(current_user)],
        default_scopes=DEFAULT_SCOPES,
        expiries=EXPIRIES,
    )

"""View decorators that blueprints reuse: sign-in and admin checks for pages and the API."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from flask import abort, redirect, request, url_for
from flask_login import current_user

from webapp.errors import MESSAGES, ApiError, wants_json


def audience_of(view: Callable) -> str | None:
    """Return who a guarded view is for ("user" or "admin"), or None when it is open to all.

    The OpenAPI description reads it to list a view's 401 and 403 answers.
    """
    return getattr(view, "audience", None)


def refuse_anonymous():
    """Return the 401 JSON for API requests, or a redirect to the sign-in page for pages."""
    if wants_json():
        raise ApiError(MESSAGES[401], 401)
    return redirect(url_for("auth.sign_in", next=request.full_path.rstrip("?")))


def api_login_required(view: Callable) -> Callable:
    """Let the view run for a signed-in user (session or bearer token); 401 JSON otherwise."""

    @wraps(view)
    def guarded(*args, **kwargs):
        if not current_user.is_authenticated:
            raise ApiError(MESSAGES[401], 401)
        return view(*args, **kwargs)

    guarded.audience = "user"
    return guarded


def login_required(view: Callable) -> Callable:
    """Let the view run for a signed-in user; send others to sign in (pages) or 401 (API)."""

    @wraps(view)
    def guarded(*args, **kwargs):
        if not current_user.is_authenticated:
            return refuse_anonymous()
        return view(*args, **kwargs)

    guarded.audience = "user"
    return guarded


def admin_required(view: Callable) -> Callable:
    """Let the view run for an admin; 401 for no one signed in, 403 (JSON or page) for a user."""

    @wraps(view)
    def guarded(*args, **kwargs):
        if not current_user.is_authenticated:
            return refuse_anonymous()
        if not current_user.is_admin:
            if wants_json():
                raise ApiError("Only administrators may do this.", 403)
            abort(403, "Only administrators may open this page.")
        return view(*args, **kwargs)

    guarded.audience = "admin"
    return guarded

"""API token scopes: what each lets a program do, and the check every bearer request passes.

A token holds one or more scopes, chosen when it is made:

    chat   conversations, turns, uploads, models and tools, and the account's own settings
    admin  the administrators' API (``/api/admin/...``); only an administrator's token holds it

A view guarded for "user" needs ``chat`` and one guarded for "admin" needs ``admin`` (the
account must still hold the admin role); a view marked ``any_scope`` (who am I, the API's
description, listing and revoking one's tokens) takes a token of any scope. Whatever its
scopes, a token cannot open pages, make tokens, change a password or sign anyone out: those
are browser actions, refused with 403 (views marked ``browser_only``, and every page).
Nor may an admin token take over an account if it leaks: setting an account's password,
disabling or enabling one, granting or taking the admin role, and creating an administrator
are browser actions too (``refuse_token`` where the body decides). An operator's automation
keeps what it needs: listing accounts, creating ones without the admin role, and the rest of
the admin API. An expired token is refused with 401 and a sentence saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from flask import Flask, abort, current_app, g, request
from flask_login import current_user

from core.scopes import SCOPES
from webapp.auth.guards import audience_of
from webapp.errors import ApiError, wants_json

# The scope a guarded view needs, by its audience (webapp.auth.guards).
NEEDED = {"user": "chat", "admin": "admin"}

BROWSER_ONLY = (
    "An API token cannot open pages, create tokens, change a password or sign anyone out. "
    "Do this in a browser, signed in to Lookout."
)
MISSING_SCOPE = (
    "This API token does not have the {scope} scope, which this request needs. Create a token "
    "with the {scope} scope under Settings → API tokens (or with flask --app webapp tokens "
    "create --scope {scope})."
)
EXPIRED = (
    "This API token expired on {when} UTC. Create a new one under Settings → API tokens (or "
    "with flask --app webapp tokens create), and use it instead."
)
ADMIN_ONLY = "Only an administrator's token may have the admin scope. Choose chat."


def describe_scopes() -> str:
    """Return every scope with what it allows, in one line of help."""
    return " ".join(f"{name}: {what}" for name, what in SCOPES.items())


def browser_only(view: Callable) -> Callable:
    """Mark a view no API token may use, whatever its scopes."""
    view.browser_only = True
    return view


def refuse_token() -> None:
    """Answer 403 with the browser-only sentence when this request came with an API token: for
    a view a token may use, but not for everything its body may ask."""
    if g.get("api_token") is not None:
        raise ApiError(BROWSER_ONLY, 403)


def any_scope(view: Callable) -> Callable:
    """Mark a signed-in view that a token of any scope may use."""
    view.any_scope = True
    return view


def scope_problem(user, scopes: list[str]) -> str | None:
    """Return why a token of this account may not hold these scopes, or None when it may."""
    if "admin" in scopes and not user.is_admin:
        return ADMIN_ONLY
    return None


def needed_scope(view: Callable) -> str | None:
    """Return the scope a token needs for this view ("any" for any), None for an open view."""
    if getattr(view, "any_scope", False):
        return "any"
    return NEEDED.get(audience_of(view) or "")


def describe_expiry(expires_at: datetime) -> str:
    """Return when a token expires (or expired), as its refusal says it."""
    return expires_at.strftime("%Y-%m-%d %H:%M")


def check_token_use() -> None:
    """Refuse a bearer request its token may not make: 401 expired, 403 browser-only or a
    missing scope. Open views, sessions and unknown tokens are left to the view's own guard."""
    if request.routing_exception is not None or not request.headers.get("Authorization"):
        return
    view = current_app.view_functions.get(request.endpoint)
    needed = needed_scope(view) if view is not None else None
    browser = getattr(view, "browser_only", False)
    if needed is None and not browser:
        return
    if not current_user.is_authenticated:
        expired = g.get("expired_api_token")
        if expired is not None and wants_json():
            raise ApiError(EXPIRED.format(when=describe_expiry(expired.expires_at)), 401)
        return
    token = g.get("api_token")
    if token is None:
        return  # signed in by a session
    if browser or not wants_json():
        if wants_json():
            raise ApiError(BROWSER_ONLY, 403)
        abort(403, BROWSER_ONLY)
    if needed == "admin" and not current_user.is_admin:
        return  # the admin guard says only administrators may
    if needed != "any" and needed not in (token.scopes or []):
        raise ApiError(MISSING_SCOPE.format(scope=needed), 403)


def init_scopes(app: Flask) -> None:
    """Check every bearer request against its token's scopes and expiry."""
    app.before_request(check_token_use)

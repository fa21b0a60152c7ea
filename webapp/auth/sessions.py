"""Who is signed in: session users, bearer-token users, and CSRF checks for session requests."""

from __future__ import annotations

from datetime import timedelta

from flask import Flask, current_app, g, request, session
from flask.sessions import SecureCookieSessionInterface
from flask_login import AnonymousUserMixin
from sqlalchemy import update

from core.extensions import csrf, db, login_manager
from core.models import ApiToken, User
from core.models.base import aware, utcnow
from webapp.auth.guards import refuse_anonymous
from webapp.auth.kept_tokens import QUIET_WRITE, find_token_with_user, note_use
from webapp.auth.scopes import init_scopes

LAST_USED_PRECISION = timedelta(minutes=1)


def find_bearer_token() -> str | None:
    """Return the token of an `Authorization: Bearer` header, or None when there is none."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip()


def find_user_by_token(token: str) -> User | None:
    """Return the active user owning the token (recording its use), or None.

    An expired token is kept in ``g.expired_api_token``, so that the answer can say it expired.
    The token and its user are kept per process until a user or a token changes
    (``kept_tokens``); the expiry is checked here on every request. Its use is written at most
    once a minute: a write on every request made all requests with one token queue on its row.
    """
    found = find_token_with_user(token)
    if found is None or found[1].disabled:
        return None
    row, user = found
    if row.expired:
        g.expired_api_token = row
        return None
    now = utcnow()
    if row.last_used_at is None or now - aware(row.last_used_at) >= LAST_USED_PRECISION:
        db.session.execute(
            update(ApiToken)
            .where(ApiToken.id == row.id)
            .values(last_used_at=now)
            .execution_options(synchronize_session=False, **{QUIET_WRITE: True})
        )
        db.session.commit()
        note_use(token, now)
    g.api_token = row
    return user


def load_session_user(session_id: str) -> User | None:
    """Return the session's user, unless disabled, signed out since, or using a bearer token.

    The session keeps "id:version" (User.get_id); a version other than the account's current
    one is a cookie from before a sign-out, a new password or a disabling, and is refused.
    A disabled account's name is kept in ``g.disabled_account``, so that the sign-in page can
    say why the session ended.
    """
    if find_bearer_token() is not None:
        return None
    user_id, _, version = session_id.partition(":")
    user = db.session.get(User, user_id)
    if user is not None and user.disabled:
        g.disabled_account = user.name
        return None
    if user is None or version != str(user.session_version):
        return None
    return user


def load_request_user(_request) -> User | None:
    """Return the user of the request's bearer token, or None."""
    token = find_bearer_token()
    return find_user_by_token(token) if token else None


def unauthorized():
    """Answer a request for a page or API that needs a signed-in user."""
    return refuse_anonymous()


def protect_from_csrf() -> None:
    """Check the CSRF token of state-changing requests, except bearer-token ones."""
    if request.method in ("GET", "HEAD", "OPTIONS", "TRACE"):
        return
    if request.routing_exception is not None:
        return  # a 404 or 405 tells more than a CSRF failure would
    if find_bearer_token() is not None:
        return
    csrf.protect()


def renew_csrf_token() -> None:
    """Forget the session's CSRF token at sign-in, so that no token of a page loaded before
    (by whoever handed the browser that page) is valid after it; the next page gets a new one."""
    field = current_app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token")
    session.pop(field, None)
    g.pop(field, None)


class Anonymous(AnonymousUserMixin):
    """The user nobody signed in as: no roles."""

    roles: list[str] = []
    is_admin = False
    name = None


class CookieSessions(SecureCookieSessionInterface):
    """Flask's signed session cookies, with the signing serializer made once per secret key
    instead of on every request (a bearer request, which has no cookie, made one too)."""

    def get_signing_serializer(self, app: Flask):
        """Return the serializer of the app's current secret keys, made when they change."""
        keys = (app.secret_key, tuple(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        made = app.extensions.get("lookout_session_serializer")
        if made is None or made[0] != keys:
            made = (keys, super().get_signing_serializer(app))
            app.extensions["lookout_session_serializer"] = made
        return made[1]


def init_sessions(app: Flask) -> None:
    """Wire Flask-Login and CSRFProtect into the app."""
    app.session_interface = CookieSessions()
    login_manager.init_app(app)
    login_manager.user_loader(load_session_user)
    login_manager.request_loader(load_request_user)
    login_manager.unauthorized_handler(unauthorized)
    login_manager.anonymous_user = Anonymous
    login_manager.login_view = "auth.sign_in"
    app.config.setdefault("WTF_CSRF_CHECK_DEFAULT", False)
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", None)
    csrf.init_app(app)
    app.before_request(protect_from_csrf)
    init_scopes(app)

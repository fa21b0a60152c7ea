"""The Account section of Settings: change one's own password, and sign out everywhere; and
the Settings page itself, with the user's own usage.

Plain forms posted to the server (no script needed); the rules live in webapp/auth/accounts.py.
"""

from __future__ import annotations

import redis
from flask import Blueprint, flash, redirect, render_template, url_for
from flask_login import current_user, login_user, logout_user
from flask_wtf import FlaskForm
from wtforms import PasswordField

from core.quotas import remaining
from webapp.auth import accounts
from webapp.auth.guards import login_required
from webapp.auth.scopes import browser_only
from webapp.security import client_address
from webapp.usage.display import limit_lines, usage_lines
from webapp.usage.report import own_usage

bp = Blueprint("account", __name__, url_prefix="/settings")

PASSWORD_CHANGED = "Your password is changed. Every other browser signed in as you is signed out."
SIGNED_OUT_EVERYWHERE = (
    "You are signed out in this browser and every other one. Your API tokens keep working; "
    "revoke them under API tokens if you need to."
)
FORM_FIELDS = {
    "currentPassword": "current_password",
    "newPassword": "new_password",
    "confirmPassword": "confirm_password",
}


class PasswordForm(FlaskForm):
    """Change one's own password: the current one, and the new one twice."""

    current_password = PasswordField("Current password")
    new_password = PasswordField("New password")
    confirm_password = PasswordField("New password again")


def render_settings(password_form: PasswordForm | None = None, status: int = 200):
    """Return the Settings page (plugin settings and the Account section) with its status."""
    page = render_template(
        "settings/index.html",
        api_url=url_for("api_plugins.list_settings"),
        password_form=password_form or PasswordForm(formdata=None),
        passwords_differ=accounts.PASSWORDS_DIFFER,  # account.js says it before the form is sent
        usage=settings_usage(),
    )
    return page, status


def settings_usage() -> dict:
    """Return the signed-in user's usage today and this month, and what is left of their
    limits, in words; the limits are None when Redis, which counts them, does not answer."""
    usage = own_usage(current_user)
    try:
        limits = limit_lines(remaining(current_user.id))
    except redis.RedisError:
        limits = None  # the rest of Settings still works
    return {**usage, "lines": usage_lines(usage["today"], usage["month"]), "limits": limits}


@bp.post("/password", endpoint="password")
@login_required
@browser_only
def change_password():
    """Change the signed-in user's password; this browser stays signed in, the others do not."""
    form = PasswordForm()
    if not form.validate_on_submit():
        return render_settings(form, 400)
    try:
        accounts.change_own_password(
            current_user,
            form.current_password.data,
            form.new_password.data,
            form.confirm_password.data,
            client_address(),
        )
    except accounts.AccountError as error:
        for field, messages in error.fields.items():
            getattr(form, FORM_FIELDS[field]).errors = list(messages)
        return render_settings(form, error.status)
    login_user(current_user)  # this browser's cookie gets the new session version
    flash(PASSWORD_CHANGED, "ok")
    # "#top" replaces the form's "#account", so the message at the top is in view.
    return redirect(url_for("settings.index", _anchor="top"))


@bp.post("/sign-out-everywhere", endpoint="sign_out_everywhere")
@login_required
@browser_only
def sign_out_everywhere():
    """End every session of the signed-in user, this one included."""
    accounts.end_sessions(current_user)
    logout_user()
    flash(SIGNED_OUT_EVERYWHERE, "ok")
    return redirect(url_for("auth.sign_in"))

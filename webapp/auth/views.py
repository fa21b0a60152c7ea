"""The sign-in and sign-out pages."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, flash, g, redirect, render_template, request, url_for
from flask_login import current_user, login_user, logout_user
from flask_wtf import FlaskForm
from wtforms import PasswordField, StringField
from wtforms.validators import DataRequired

from core.models.accounts import password_matches
from webapp.auth import accounts, throttle
from webapp.auth.scopes import browser_only
from webapp.auth.sessions import renew_csrf_token
from webapp.security import client_address

bp = Blueprint("auth", __name__)

# The same for an unknown name, so it says nothing of which names exist.
WRONG_CREDENTIALS = (
    "That name and password do not match. Check them and try again; if you forgot your "
    "password, ask an administrator to set a new one in Admin → Users."
)
# Said to the account's owner, who passes it on: the admin's page first, then the command.
DISABLED = (
    "This account is disabled. Ask an administrator to enable it in Admin → Users "
    "(or with flask --app webapp users enable {name})."
)
# Said on the sign-in page to someone whose account was disabled while they were signed in.
DISABLED_WHILE_SIGNED_IN = (
    "You were signed out because an administrator disabled your account ({name}). Ask an "
    "administrator to enable it again in Admin → Users "
    "(or with flask --app webapp users enable {name})."
)
SIGNED_OUT = "You are signed out, in this browser and every other one."


class SignInForm(FlaskForm):
    """The sign-in form: a name and a password."""

    name = StringField("Name", validators=[DataRequired()])
    password = PasswordField("Password", validators=[DataRequired()])


def safe_next(target: str | None) -> str:
    """Return target when it is a path on this site, else the home page.

    A backslash or a control character is refused outright: browsers read ``/\\host`` as
    ``//host``, another site, whatever this server's own encoding of the header does."""
    if not target or "\\" in target or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return url_for("home.index")
    if target.startswith("/") and not target.startswith("//") and not urlsplit(target).netloc:
        return target
    return url_for("home.index")


@bp.route("/sign-in", methods=["GET", "POST"])
def sign_in():
    """Show the sign-in form, or sign the user in."""
    if current_user.is_authenticated:
        return redirect(url_for("home.index"))
    if request.method == "GET" and g.get("disabled_account"):
        # Said once: the dead session is dropped, so the next visit is a plain sign-in page.
        flash(DISABLED_WHILE_SIGNED_IN.format(name=g.disabled_account), "error")
        logout_user()
    form = SignInForm()
    status = 200
    if form.validate_on_submit():
        name, address = form.name.data.strip(), client_address()
        lock = throttle.find_lock(name, address)
        user = None if lock else accounts.find_account(name)
        if lock:
            flash(throttle.describe(lock, name), "error")
            status = 429
        elif not password_matches(user.password_hash if user else None, form.password.data):
            throttle.note_failure(name, address)
            flash(WRONG_CREDENTIALS, "error")
            status = 401
        elif user.disabled:
            flash(DISABLED.format(name=user.name), "error")
            status = 403
        else:
            throttle.clear_failures(name)
            accounts.record_sign_in(user)
            renew_csrf_token()
            login_user(user)
            return redirect(safe_next(request.args.get("next")))
    elif request.method == "POST":
        status = 400
    return render_template("auth/sign_in.html", form=form), status


@bp.route("/sign-out", methods=["POST"])
@browser_only
def sign_out():
    """Sign the user out of every browser (a copied cookie too) and go back to the sign-in page."""
    if current_user.is_authenticated:
        accounts.end_sessions(current_user)
        flash(SIGNED_OUT, "ok")
    logout_user()
    return redirect(url_for("auth.sign_in"))

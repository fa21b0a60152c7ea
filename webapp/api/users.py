"""The admins' accounts API under /api/admin/users: list, create, disable or enable, grant or
take the admin role, set a password; each account with its usage this month. The rules are
webapp/auth/accounts.py's, which the `flask users` commands and the Users page
(static/users.js) share. An admin token lists accounts and creates ones without the admin role;
the rest would take an account over if the token leaked, so only a signed-in browser may."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flask import Blueprint, jsonify
from marshmallow import Schema, fields, validate

from core.extensions import db
from core.models import User
from webapp.api.bodies import load_json
from webapp.api.operations import operation
from webapp.api.schemas.accounts import (
    AccountListSchema,
    AccountSchema,
    NewPasswordAccountSchema,
    WithExtras,
)
from webapp.auth import accounts
from webapp.auth.guards import admin_required
from webapp.auth.scopes import browser_only, refuse_token
from webapp.errors import ApiError
from webapp.usage.report import monthly_usage

bp = Blueprint("api_users", __name__, url_prefix="/api/admin/users")


class NewAccount(Schema):
    """A new account: its name, whether it is an admin, and optionally its password."""

    name = fields.String(
        required=True,
        validate=validate.Length(max=accounts.NAME_MAX_LENGTH),
        metadata={"title": "Name"},
    )
    admin = fields.Boolean(load_default=False, metadata={"title": "Administrator"})
    password = fields.String(metadata={"title": "Password"})


class AccountChange(Schema):
    """What an admin may change in one request: disabled, admin (each optional)."""

    disabled = fields.Boolean(metadata={"title": "Disabled"})
    admin = fields.Boolean(metadata={"title": "Administrator"})


class NewPassword(Schema):
    """A password to set; without one, a new one is generated and answered once."""

    password = fields.String(metadata={"title": "Password"})


@contextmanager
def said_as_api_errors() -> Iterator[None]:
    """Turn a refused account change into the API's error answer."""
    try:
        yield
    except accounts.AccountError as error:
        raise ApiError(error.message, error.status, error.fields) from None


def get_account(user_id: str) -> User:
    """Return the account with this id, or answer 404."""
    user = db.session.get(User, user_id)
    if user is None:
        raise ApiError("There is no such account. Reload the page to see the current list.", 404)
    return user


def show_account(user: User, **extras) -> dict:
    """Return an account as admins see it: its public fields and its usage this month (UTC);
    with ``password``, the one just generated (or null)."""
    usage = monthly_usage([user.id])[user.id]
    schema = NewPasswordAccountSchema if "password" in extras else AccountSchema
    return schema().dump(WithExtras(user, usage=usage, **extras))


@bp.get("")
@admin_required
@operation(answers={200: AccountListSchema})
def list_users():
    """List every account by name."""
    users = db.session.scalars(db.select(User).order_by(User.name)).all()
    usage = monthly_usage(user.id for user in users)
    shown = [WithExtras(user, usage=usage[user.id]) for user in users]
    return jsonify(AccountListSchema().dump({"users": shown}))


@bp.post("")
@admin_required
@operation(body=NewAccount, answers={201: NewPasswordAccountSchema}, errors=(409,))
def create_user():
    """Create an account; answer 201 with it and, when generated, its password (shown once).
    An administrator's account is created from a signed-in browser only, never with a token."""
    body = load_json(NewAccount, "new account")
    if body["admin"]:
        refuse_token()
    with said_as_api_errors():
        user, generated = accounts.create_account(
            body["name"], body.get("password"), admin=body["admin"]
        )
    return jsonify(show_account(user, password=generated)), 201


@bp.patch("/<user_id>")
@admin_required
@browser_only
@operation(body=AccountChange, answers={200: AccountSchema}, errors=(409,))
def change_user(user_id: str):
    """Disable or enable an account, or grant or take its admin role; answer the account.
    From a signed-in browser only, never with a token."""
    body = load_json(AccountChange, "change")
    user = get_account(user_id)
    with said_as_api_errors():
        if "admin" in body:
            accounts.set_admin(user, body["admin"])
        if "disabled" in body:
            accounts.set_disabled(user, body["disabled"])
    return jsonify(show_account(user))


@bp.post("/<user_id>/password")
@admin_required
@browser_only
@operation(body=NewPassword, answers={200: NewPasswordAccountSchema})
def set_password(user_id: str):
    """Set an account's password (ending its sessions); a generated one is answered once.
    From a signed-in browser only, never with a token."""
    body = load_json(NewPassword, "new password")
    user = get_account(user_id)
    with said_as_api_errors():
        generated = accounts.set_password(user, body.get("password"))
    return jsonify(show_account(user, password=generated))

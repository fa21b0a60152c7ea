"""Accounts over the API: who am I. (The admins' accounts API is webapp/api/users.py.)"""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask_login import current_user

from core.models import User
from webapp.api.operations import operation
from webapp.api.schemas.accounts import UserSchema
from webapp.auth.guards import api_login_required
from webapp.auth.scopes import any_scope

bp = Blueprint("api_accounts", __name__, url_prefix="/api")


def show_user(user: User) -> dict:
    """Return a user's public fields in camelCase."""
    return UserSchema().dump(user)


@bp.get("/me")
@api_login_required
@any_scope
@operation(answers={200: UserSchema})
def me():
    """Return the signed-in user."""
    return jsonify(show_user(current_user))

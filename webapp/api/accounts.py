"""Accounts over the API: who am I (the admins' accounts API is webapp/api/users.py)."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask_login import current_user

from webapp.auth.guards import api_login_required
from webapp.models import User

bp = Blueprint("api_accounts", __name__, url_prefix="/api")


def show_user(user: User) -> dict:
    """Return a user's public fields in camelCase."""
    return {
        "id": user.id,
        "name": user.name,
        "roles": list(user.roles),
        "disabled": user.disabled,
        "createdAt": user.created_at.isoformat(),
        "lastSignedInAt": user.last_signed_in_at.isoformat() if user.last_signed_in_at else None,
    }


@bp.get("/me")
@api_login_required
def me():
    """Return the signed-in user."""
    return jsonify(show_user(current_user))

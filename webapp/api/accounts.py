"""Accounts over the API: who am I, and the admin's list of users."""

from __future__ import annotations

from flask import Blueprint, jsonify
from flask_login import current_user

from webapp.auth.guards import admin_required, api_login_required
from webapp.extensions import db
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
    }


@bp.get("/me")
@api_login_required
def me():
    """Return the signed-in user."""
    return jsonify(show_user(current_user))


@bp.get("/admin/users")
@admin_required
def list_users():
    """List every account (admins only)."""
    users = db.session.scalars(db.select(User).order_by(User.name))
    return jsonify({"users": [show_user(user) for user in users]})

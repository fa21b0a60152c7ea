"""The API tokens of the signed-in user: create (shown once), list, revoke."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask_login import current_user

from webapp.auth.guards import api_login_required
from webapp.errors import ApiError
from webapp.extensions import db
from webapp.models import ApiToken

bp = Blueprint("api_tokens", __name__, url_prefix="/api/tokens")


def show_token(row: ApiToken) -> dict:
    """Return a token's public fields in camelCase (never its value)."""
    return {
        "id": row.id,
        "name": row.name,
        "createdAt": row.created_at.isoformat(),
        "lastUsedAt": row.last_used_at.isoformat() if row.last_used_at else None,
    }


@bp.post("")
@api_login_required
def create_token():
    """Create a token named in the body; answer 201 with the token, which is never shown again."""
    body = request.get_json(silent=True)
    name = body.get("name") if isinstance(body, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise ApiError("Give the token a name.", 400, {"name": ["A name is required."]})
    if len(name.strip()) > 100:
        raise ApiError("The name is too long.", 400, {"name": ["Use at most 100 characters."]})
    row, token = ApiToken.make(current_user, name.strip())
    db.session.add(row)
    db.session.commit()
    return jsonify({**show_token(row), "token": token}), 201


@bp.get("")
@api_login_required
def list_tokens():
    """List the user's tokens without their values."""
    rows = db.session.scalars(
        db.select(ApiToken).filter_by(user_id=current_user.id).order_by(ApiToken.created_at)
    )
    return jsonify({"tokens": [show_token(row) for row in rows]})


@bp.delete("/<token_id>")
@api_login_required
def revoke_token(token_id: str):
    """Revoke one of the user's tokens; 404 when it is not theirs."""
    row = db.session.get(ApiToken, token_id)
    if row is None or row.user_id != current_user.id:
        raise ApiError("There is no such token.", 404)
    db.session.delete(row)
    db.session.commit()
    return "", 204

"""The API tokens of the signed-in user: create (shown once), list, revoke."""

from __future__ import annotations

from types import SimpleNamespace

from flask import Blueprint, jsonify
from flask_login import current_user

from webapp.api.bodies import load_json
from webapp.api.operations import NO_CONTENT, operation
from webapp.api.schemas.tokens import NewTokenSchema, TokenBody, TokenListSchema
from webapp.auth.guards import api_login_required
from webapp.errors import ApiError
from webapp.extensions import db
from webapp.models import ApiToken

bp = Blueprint("api_tokens", __name__, url_prefix="/api/tokens")


@bp.post("")
@api_login_required
@operation(body=TokenBody, answers={201: NewTokenSchema})
def create_token():
    """Create a token named in the body; answer 201 with the token, which is never shown again."""
    name = load_json(TokenBody, "token")["name"]
    row, token = ApiToken.make(current_user, name)
    db.session.add(row)
    db.session.commit()
    created = SimpleNamespace(
        id=row.id, name=row.name, created_at=row.created_at, last_used_at=None, token=token
    )
    return jsonify(NewTokenSchema().dump(created)), 201


@bp.get("")
@api_login_required
@operation(answers={200: TokenListSchema})
def list_tokens():
    """List the user's tokens without their values."""
    rows = db.session.scalars(
        db.select(ApiToken).filter_by(user_id=current_user.id).order_by(ApiToken.created_at)
    )
    return jsonify(TokenListSchema().dump({"tokens": rows}))


@bp.delete("/<token_id>")
@api_login_required
@operation(answers={204: NO_CONTENT})
def revoke_token(token_id: str):
    """Revoke one of the user's tokens; 404 when it is not theirs."""
    row = db.session.get(ApiToken, token_id)
    if row is None or row.user_id != current_user.id:
        raise ApiError("There is no such token.", 404)
    db.session.delete(row)
    db.session.commit()
    return "", 204

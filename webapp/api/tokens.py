"""The API tokens of the signed-in user: create (shown once; in a browser only), list, revoke.

A token may list its account's tokens and revoke one (itself too), whatever its scopes; it
cannot make another (webapp/auth/scopes.py).
"""

from __future__ import annotations

from types import SimpleNamespace

from flask import Blueprint, jsonify
from flask_login import current_user

from core.extensions import db
from core.models import ApiToken
from webapp.api.bodies import load_json
from webapp.api.operations import NO_CONTENT, operation
from webapp.api.schemas.tokens import NewTokenSchema, TokenBody, TokenListSchema
from webapp.auth import accounts
from webapp.auth.guards import api_login_required
from webapp.auth.scopes import any_scope, browser_only
from webapp.errors import ApiError

bp = Blueprint("api_tokens", __name__, url_prefix="/api/tokens")


@bp.post("")
@api_login_required
@browser_only
@operation(body=TokenBody, answers={201: NewTokenSchema})
def create_token():
    """Create a token with the body's name, scopes and expiry; answer 201 with the token, which
    is never shown again. Only a signed-in browser may (not a token)."""
    body = load_json(TokenBody, "token")
    try:
        row, token = accounts.create_token(
            current_user, body["name"], body["scopes"], body["expiresInDays"]
        )
    except accounts.AccountError as error:
        raise ApiError(error.message, error.status, error.fields) from None
    created = SimpleNamespace(
        id=row.id,
        name=row.name,
        created_at=row.created_at,
        last_used_at=None,
        scopes=row.scopes,
        expires_at=row.expires_at,
        token=token,
    )
    return jsonify(NewTokenSchema().dump(created)), 201


@bp.get("")
@api_login_required
@any_scope
@operation(answers={200: TokenListSchema})
def list_tokens():
    """List the user's tokens without their values."""
    rows = db.session.scalars(
        db.select(ApiToken).filter_by(user_id=current_user.id).order_by(ApiToken.created_at)
    )
    return jsonify(TokenListSchema().dump({"tokens": rows}))


@bp.delete("/<token_id>")
@api_login_required
@any_scope
@operation(answers={204: NO_CONTENT})
def revoke_token(token_id: str):
    """Revoke one of the user's tokens; 404 when it is not theirs."""
    row = db.session.get(ApiToken, token_id)
    if row is None or row.user_id != current_user.id:
        raise ApiError("There is no such token.", 404)
    db.session.delete(row)
    db.session.commit()
    return "", 204

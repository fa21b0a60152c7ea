"""API tokens: the body that creates one (name, scopes, expiry), and how they are shown (the
value only once)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, pre_load, validate

from core.scopes import DEFAULT_SCOPES, SCOPES
from webapp.api.schemas.times import UtcTime
from webapp.auth.accounts import TOKEN_MAX_DAYS
from webapp.auth.scopes import describe_scopes

MAX_NAME = 100


class TokenBody(Schema):
    """The body of ``POST /api/tokens``."""

    name = fields.String(
        required=True,
        validate=[
            validate.Length(min=1, error="A name is required."),
            validate.Length(max=MAX_NAME),
        ],
        error_messages={"required": "A name is required.", "null": "A name is required."},
        metadata={"title": "Token name", "description": 'Where it will be used, e.g. "laptop".'},
    )

    scopes = fields.List(
        fields.String(
            validate=validate.OneOf(SCOPES, error="Choose scopes among: " + ", ".join(SCOPES) + ".")
        ),
        load_default=lambda: list(DEFAULT_SCOPES),
        validate=validate.Length(min=1, error="Choose at least one scope."),
        metadata={
            "title": "Scopes",
            "description": f"What the token may do. {describe_scopes()} Only an "
            "administrator's token may have admin. Default: chat.",
        },
    )
    expiresInDays = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(
            min=1, max=TOKEN_MAX_DAYS, error=f"Give a number of days from 1 to {TOKEN_MAX_DAYS}."
        ),
        metadata={
            "title": "Expires in (days)",
            "description": "The token stops working this many days from now; null: never.",
        },
    )

    @pre_load
    def strip_name(self, data: Any, **_: Any) -> Any:
        """Leading and trailing spaces are not part of the name."""
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            return {**data, "name": data["name"].strip()}
        return data


class TokenSchema(Schema):
    """A token's public fields, never its value."""

    id = fields.String()
    name = fields.String()
    createdAt = UtcTime(attribute="created_at")
    lastUsedAt = UtcTime(attribute="last_used_at", allow_none=True)
    scopes = fields.List(fields.String(), metadata={"description": "What the token may do."})
    expiresAt = UtcTime(
        attribute="expires_at",
        allow_none=True,
        metadata={"description": "When the token stops working; null: never."},
    )


class NewTokenSchema(TokenSchema):
    """A token just created, with its value: shown this once and never again."""

    token = fields.String()


class TokenListSchema(Schema):
    """The signed-in user's tokens."""

    tokens = fields.List(fields.Nested(TokenSchema))

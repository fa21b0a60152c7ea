"""Accounts as the API shows them."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields

from webapp.api.schemas.times import UtcTime


class UserSchema(Schema):
    """A user's public fields."""

    id = fields.String()
    name = fields.String()
    roles = fields.List(fields.String())
    disabled = fields.Boolean()
    createdAt = UtcTime(attribute="created_at")
    lastSignedInAt = UtcTime(attribute="last_signed_in_at", allow_none=True)


class AccountSchema(UserSchema):
    """An account as admins see it: its public fields and its usage this month (UTC)."""

    usageThisMonth = fields.Dict(attribute="usage")


class NewPasswordAccountSchema(AccountSchema):
    """An account just created or given a password: a generated password is shown this once
    (null when the admin chose it)."""

    password = fields.String(allow_none=True)


class WithExtras:
    """An object read as ``base`` with some attributes added (a generated password, usage), so
    that one schema dumps both."""

    def __init__(self, base: Any, **extras: Any) -> None:
        self._base = base
        self.__dict__.update(extras)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


class AccountListSchema(Schema):
    """Every account, by name (admins only)."""

    users = fields.List(fields.Nested(AccountSchema))

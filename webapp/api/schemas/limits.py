"""A user's own limits as admins read them: each limit's default, own value, and what is used."""

from __future__ import annotations

from marshmallow import Schema, fields


class LimitSchema(Schema):
    """One limit: its setting's default, the user's own value (null: the default), its unit."""

    limit = fields.String()
    label = fields.String()
    setting = fields.String()
    default = fields.Integer()
    value = fields.Integer(allow_none=True)
    unit = fields.String(allow_none=True)


class RemainingSchema(Schema):
    """How much of a limit the user has used, and when its window ends (null: no window)."""

    limit = fields.String()
    label = fields.String()
    used = fields.Integer()
    allowed = fields.Integer()
    resetsAt = fields.String(allow_none=True, metadata={"format": "date-time"})


class UserLimitsSchema(Schema):
    """One user's limits and what is used of them."""

    limits = fields.List(fields.Nested(LimitSchema))
    remaining = fields.List(fields.Nested(RemainingSchema))

"""Health as admins read it: each part, whether it is up, why not, and how old that news is."""

from __future__ import annotations

from marshmallow import Schema, fields


class PartHealthSchema(Schema):
    """One part (database, Redis, a worker): up or not, and when it was last checked."""

    ok = fields.Boolean()
    error = fields.String(allow_none=True)
    checkedSecondsAgo = fields.Float()


class HealthSchema(Schema):
    """Whether every part is up, and each part's check (the answer is a 503 when one is down)."""

    ok = fields.Boolean()
    checks = fields.Dict(keys=fields.String(), values=fields.Nested(PartHealthSchema))

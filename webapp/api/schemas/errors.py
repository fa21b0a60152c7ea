"""The one shape of every JSON error: {"error": {"message": ..., "fields": {...}}}."""

from __future__ import annotations

from marshmallow import Schema, fields


class ErrorDetail(Schema):
    """What went wrong, as a sentence that says what to do, and per-field messages."""

    message = fields.String(required=True)
    fields_ = fields.Dict(
        data_key="fields",
        attribute="fields",
        keys=fields.String(),
        values=fields.List(fields.String()),
        required=True,
        metadata={"description": "Messages by field (dotted paths for nested ones)."},
    )


class ErrorSchema(Schema):
    """Every error answer of the API, whatever its status."""

    error = fields.Nested(ErrorDetail, required=True)

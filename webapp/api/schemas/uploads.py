"""Uploads: the multipart body, and the stored upload (its text stays on the server)."""

from __future__ import annotations

from marshmallow import Schema, fields


class UploadBody(Schema):
    """The multipart/form-data body of ``POST /api/uploads``."""

    file = fields.Raw(
        required=True, metadata={"type": "string", "format": "binary", "title": "File"}
    )


class UploadSchema(Schema):
    """An uploaded file, ready to attach to a turn by its id."""

    id = fields.String()
    filename = fields.String()
    mimeType = fields.String(attribute="mime_type")
    size = fields.Integer(metadata={"description": "The file's bytes."})
    textChars = fields.Integer(
        attribute="text_chars", metadata={"description": "The characters of its stored text."}
    )
    room = fields.Integer(
        metadata={
            "description": "What it counts against the user's room: the larger of size and "
            "textChars."
        }
    )


class UploadListSchema(Schema):
    """The user's stored attachments, newest first."""

    uploads = fields.List(fields.Nested(UploadSchema))

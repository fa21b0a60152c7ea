"""File uploads: a file becomes text through its ingester, kept once and attached by reference."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request
from flask_login import current_user

from core import plugin_host, quotas
from core.extensions import db
from core.models import Upload
from core.models.usage import add_usage
from core.turn.parts import attachment_part
from tools.api import Cancelled, IngestError, IngestInput, Signal, ToolError, normalise_mime_type
from tools.parser_shares import ParsersBusy, acting_for
from webapp.api.operations import MULTIPART, NO_CONTENT, operation
from webapp.api.schemas.uploads import UploadBody, UploadListSchema, UploadSchema
from webapp.auth.guards import api_login_required
from webapp.errors import ApiError

bp = Blueprint("api_uploads", __name__, url_prefix="/api/uploads")
TEXT_TYPES = {"text/plain", "text/markdown", "text/csv", "application/json"}
# Other users' files hold the parser processes: a client may try again this soon.
BUSY_RETRY_SECONDS = 30


def extract_text(data: bytes, mime_type: str, filename: str) -> str:
    """Return the file's text: plain text types as they are, others through their ingester,
    in a parser process under the signed-in user's fair share (``tools.parser_shares``)."""
    if mime_type in TEXT_TYPES:
        return data.decode("utf-8", errors="replace")
    ingesters = plugin_host.get_host().ingesters
    if not ingesters.accepts(mime_type):
        raise ApiError(
            f"{filename} is of type {mime_type}, which Lookout cannot read. Attach text, "
            "Markdown, CSV, JSON, or a type an installed plugin reads (such as PDF).",
            415,
        )
    # The ingester runs in a parser process: this thread waits without holding the GIL, and
    # a hostile file is stopped by the time, CPU and memory limits.
    seconds = current_app.config["UPLOAD_PARSE_SECONDS"]
    signal = Signal.after(seconds)
    try:
        with acting_for(current_user.id):
            result = ingesters.ingest(IngestInput(data, mime_type, filename=filename), signal)
    except IngestError as error:
        raise ApiError(error.message, 422) from error
    except ParsersBusy as busy:
        raise ApiError(busy.message, 503, retry_after=BUSY_RETRY_SECONDS) from busy
    except Cancelled:
        raise ApiError(
            f"Reading {filename} took longer than {seconds} seconds. Attach a smaller or "
            "simpler file, or paste the part you need as text.",
            422,
        ) from None
    except ToolError as error:
        raise ApiError(f"{error.message} Attach a smaller or simpler file.", 422) from error
    finally:
        signal.cancel()  # stops the signal's timer thread now rather than at its deadline
    return result.text if result is not None else ""


@bp.post("")
@api_login_required
@operation(
    body=UploadBody,
    body_type=MULTIPART,
    answers={201: UploadSchema},
    errors=(413, 415, 422, 429, 503),
)
def upload():
    """Store the text of one uploaded file (multipart field ``file``); 201 with its id.

    The user's room and hourly uploads are checked before the file is read, and the room
    again once its text is known (it counts the larger of bytes and characters)."""
    file = request.files.get("file")
    if file is None or not file.filename:
        raise ApiError("Send the file as multipart form data in a field named file.", 400)
    limit = current_app.config["ATTACHMENT_MAX_BYTES"]
    data = file.stream.read(limit + 1)
    if len(data) > limit:
        size = f"{limit / 1_000_000:g} MB" if limit >= 100_000 else f"{limit} byte"
        raise ApiError(f"{file.filename} is larger than the {size} limit for attachments.", 413)
    mime_type = normalise_mime_type(file.mimetype or "application/octet-stream")
    try:
        quotas.check_upload(current_user.id, file.filename, len(data))
        quotas.check_upload_rate(current_user.id)
    except quotas.QuotaExceeded as over:
        raise ApiError(over.message, 429, retry_after=over.retry_after) from over
    text = extract_text(data, mime_type, file.filename)
    row = Upload(
        owner_id=current_user.id,
        filename=file.filename[:255],
        mime_type=mime_type,
        size=len(data),
        text=text,
        text_chars=len(text),
    )
    try:
        with quotas.held(current_user.id, "uploading"):
            quotas.check_upload(current_user.id, file.filename, len(data), len(text))
            db.session.add(row)
            add_usage(current_user.id, [("uploads", "", 1), ("uploadBytes", "", len(data))])
            db.session.commit()
    except quotas.QuotaExceeded as over:
        raise ApiError(over.message, 429, retry_after=over.retry_after) from over
    return jsonify(UploadSchema().dump(row)), 201


@bp.get("")
@api_login_required
@operation(answers={200: UploadListSchema})
def list_uploads():
    """Return the user's stored attachments, newest first, with the room each takes."""
    rows = db.session.scalars(
        db.select(Upload).filter_by(owner_id=current_user.id).order_by(Upload.created_at.desc())
    )
    return jsonify(UploadListSchema().dump({"uploads": rows}))


@bp.delete("/<upload_id>")
@api_login_required
@operation(answers={204: NO_CONTENT})
def delete_upload(upload_id: str):
    """Delete one of the user's stored attachments and free its room at once; messages that
    attached it keep its name, and the model reads that the file was deleted."""
    row = db.session.get(Upload, upload_id)
    if row is None or row.owner_id != current_user.id:
        raise ApiError("There is no such upload.", 404)
    db.session.delete(row)
    db.session.commit()
    return "", 204


def attachment_parts(upload_ids: list[str]) -> list[dict]:
    """Return the attachment parts for a user message, each a reference to one of the user's
    uploads (its text is not copied); 400 naming an id that is not the user's."""
    parts = []
    for upload_id in dict.fromkeys(upload_ids):
        row = db.session.get(Upload, upload_id)
        if row is None or row.owner_id != current_user.id:
            raise ApiError(
                f"There is no upload {upload_id}. Upload the file again with POST /api/uploads.",
                400,
                {"attachments": [f"Unknown upload {upload_id}."]},
            )
        parts.append(attachment_part(row.id, row.filename, row.mime_type))
    return parts

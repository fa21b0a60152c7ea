"""Uploaded files, kept as the text their ingester extracted, and what a stored one costs."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from core.extensions import db
from core.models.base import ID_LENGTH, created_column, id_column
from core.turn.parts import attached_upload_id, attachment_with_text

# What the model reads in place of the text of an upload its owner has since deleted.
DELETED_TEXT = "[The user deleted this file after attaching it; its text is no longer kept.]"


def room_taken(size: int, text_chars: int) -> int:
    """Return what an upload counts against its owner's room: the larger of its file's bytes
    and its stored text's characters (a 4 KB PDF whose text is 2,000,000 characters counts as
    2,000,000)."""
    return max(size, text_chars)


class Upload(db.Model):
    """One user's uploaded file: its name, type, size and extracted text (not its bytes).

    Messages refer to an upload by id (an ``attachment`` part); the text is kept once, here.
    """

    __tablename__ = "uploads"

    id: Mapped[str] = id_column()
    owner_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True
    )
    filename: Mapped[str] = mapped_column(String(255), nullable=False)
    mime_type: Mapped[str] = mapped_column(String(200), nullable=False)
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    # Kept beside the text, so that summing the room never reads every stored text.
    text_chars: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    created_at: Mapped[datetime] = created_column()

    @property
    def room(self) -> int:
        """Return what this upload counts against its owner's room (see ``room_taken``)."""
        return room_taken(self.size, self.text_chars)


def with_attachment_texts(messages: Iterable[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Return each message's parts with every attachment carrying its upload's text, read in
    one query; an upload deleted since reads as ``DELETED_TEXT``. The one reader of the text
    of attached uploads: the prompt gets it here."""
    messages = [list(parts) for parts in messages]
    ids = {
        upload_id for parts in messages for part in parts if (upload_id := attached_upload_id(part))
    }
    texts: dict[str, str] = {}
    if ids:
        rows = db.session.execute(db.select(Upload.id, Upload.text).filter(Upload.id.in_(ids)))
        texts = {row.id: row.text for row in rows}
    return [
        [
            attachment_with_text(part, texts.get(upload_id, DELETED_TEXT))
            if (upload_id := attached_upload_id(part))
            else part
            for part in parts
        ]
        for parts in messages
    ]

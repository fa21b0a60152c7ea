"""Uploaded files, kept as the text their ingester extracted, until a turn attaches them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from webapp.extensions import db
from webapp.models.base import ID_LENGTH, created_column, id_column


class Upload(db.Model):
    """One user's uploaded file: its name, type, size and extracted text (not its bytes)."""

    __tablename__ = "uploads"

    id: Mapped[str] = id_column()
    owner_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True
    )
    filename: Mapped[str] = mapped_column(String(255), nullable=False)
    mime_type: Mapped[str] = mapped_column(String(200), nullable=False)
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = created_column()

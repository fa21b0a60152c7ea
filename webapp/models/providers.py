"""Model providers an admin configures: an OpenAI-compatible endpoint, its key and its models."""

from __future__ import annotations

from sqlalchemy import JSON, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from webapp.extensions import db
from webapp.models.base import id_column


class Provider(db.Model):
    """A provider; models is a list of {"name": str, "tools": bool}."""

    __tablename__ = "providers"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    kind: Mapped[str] = mapped_column(String(50), nullable=False, default="openai-compatible")
    base_url: Mapped[str] = mapped_column(String(500), nullable=False)
    api_key: Mapped[str | None] = mapped_column(Text)
    models: Mapped[list] = mapped_column(JSON, nullable=False, default=list)

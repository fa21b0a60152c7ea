"""MCP servers an admin added as tool sources: how to reach each, and its last tool listing."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from core.extensions import db
from core.models.base import utcnow
from core.models.encrypted import EncryptedJSON


class McpServer(db.Model):
    """An MCP server: a streamable-HTTP ``url`` with ``headers`` (stored encrypted: they carry
    keys), or a ``command`` run over stdio; ``tools`` is its last listing (name, description,
    inputSchema), ``status`` how that listing went ("ok", "down", "slow", "refused")."""

    __tablename__ = "mcp_servers"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    url: Mapped[str | None] = mapped_column(String(2000))
    headers: Mapped[dict] = mapped_column(EncryptedJSON, nullable=False, default=dict)
    command: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    allow_private: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    tools: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="new")
    error: Mapped[str | None] = mapped_column(Text)
    listed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, default=utcnow
    )

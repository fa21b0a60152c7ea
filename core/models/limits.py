"""A user's own limits: the values an admin set for one user in place of the defaults."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from core.extensions import db
from core.models.base import ID_LENGTH


class UserLimit(db.Model):
    """One limit an admin set for one user (the setting's name, and its value in the setting's
    unit); a limit without a row is the setting's default."""

    __tablename__ = "user_limits"

    user_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    setting: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[int] = mapped_column(BigInteger, nullable=False)

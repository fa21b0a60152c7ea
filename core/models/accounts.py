"""Accounts: users with hashed passwords and roles, and their API tokens (stored as sha256,
with their scopes and an optional expiry; core/scopes.py names the scopes)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from functools import cache

from flask_login import UserMixin
from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship
from werkzeug.security import check_password_hash, generate_password_hash

from core.extensions import db
from core.kept import watch
from core.models.base import ID_LENGTH, aware, created_column, id_column, utcnow
from core.scopes import DEFAULT_SCOPES, scopes_allowed

TOKEN_PREFIX = "lk_"


def hash_token(token: str) -> str:
    """Return the sha256 hex digest under which a token is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


@cache
def decoy_hash() -> str:
    """Return a hash of a random password, made once, to check against for unknown names."""
    return generate_password_hash(secrets.token_urlsafe(16))


def password_matches(password_hash: str | None, password: str) -> bool:
    """Return whether the password matches the hash; None (no such account) never matches.

    With no hash, the password is still checked against a decoy hash: sign-in then takes the
    same work for an unknown name as for a known one, and its time does not tell them apart.
    """
    matches = check_password_hash(password_hash or decoy_hash(), password)
    return matches and password_hash is not None


class User(UserMixin, db.Model):
    """A person who signs in; every account holds role `user`, admins also `admin`."""

    __tablename__ = "users"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    password_hash: Mapped[str] = mapped_column(String(255), nullable=False)
    roles: Mapped[list] = mapped_column(JSON, nullable=False, default=lambda: ["user"])
    disabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    # Part of every session cookie (see get_id): raising it ends every session at once.
    session_version: Mapped[int] = mapped_column(
        Integer, nullable=False, default=1, server_default="1"
    )
    last_signed_in_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = created_column()

    tokens: Mapped[list[ApiToken]] = relationship(
        back_populates="user", cascade="all, delete-orphan"
    )

    @property
    def is_active(self) -> bool:
        """Return False for a disabled account, which Flask-Login then refuses."""
        return not self.disabled

    def get_id(self) -> str:
        """Return what the session cookie keeps: the id and the session version, "id:version".

        A cookie copied before the version was raised names an old version, and is refused.
        """
        return f"{self.id}:{self.session_version}"

    @property
    def is_admin(self) -> bool:
        """Return whether the account holds the admin role."""
        return "admin" in (self.roles or [])

    def set_password(self, password: str) -> None:
        """Store a salted hash of the password."""
        self.password_hash = generate_password_hash(password)

    def check_password(self, password: str) -> bool:
        """Return whether the password matches the stored hash."""
        return password_matches(self.password_hash, password)

    def end_sessions(self) -> None:
        """Make every session cookie of this user invalid (API tokens are revoked on their own)."""
        self.session_version = (self.session_version or 1) + 1

    @classmethod
    def make(cls, name: str, password: str, admin: bool = False) -> User:
        """Return a new (unsaved) user with the roles that go with admin."""
        user = cls(name=name, roles=["user", "admin"] if admin else ["user"], disabled=False)
        user.set_password(password)
        return user


class ApiToken(db.Model):
    """A named bearer token of one user, kept only as its sha256 hash, with its scopes and
    when it expires (None: never)."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = id_column()
    user_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    created_at: Mapped[datetime] = created_column()
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    scopes: Mapped[list] = mapped_column(JSON, nullable=False, default=lambda: list(DEFAULT_SCOPES))
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    user: Mapped[User] = relationship(back_populates="tokens")

    @property
    def expired(self) -> bool:
        """Return whether the token's expiry has passed."""
        return self.expires_at is not None and aware(self.expires_at) <= utcnow()

    @classmethod
    def make(
        cls,
        user: User,
        name: str,
        scopes: list[str] | None = None,
        expires_at: datetime | None = None,
    ) -> tuple[ApiToken, str]:
        """Return a new (unsaved) token row and the token itself, which is shown only once.

        Without ``scopes`` the token holds every scope the account may hold; the API, the
        tokens page and ``flask tokens create`` always pass the scopes the person chose.
        """
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        chosen = list(scopes) if scopes is not None else scopes_allowed(user)
        row = cls(
            user=user, name=name, token_hash=hash_token(token), scopes=chosen, expires_at=expires_at
        )
        return row, token


# Set anew after every commit that wrote a user or a token, in whichever process wrote it: the
# web keeps tokens with their users per process behind it (webapp/auth/kept_tokens.py).
ACCOUNTS_VERSION_KEY = "lookout:accounts:version"
watch(User, ACCOUNTS_VERSION_KEY)
watch(ApiToken, ACCOUNTS_VERSION_KEY)

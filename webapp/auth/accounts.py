"""What may be done to an account, in one place for the commands, the JSON API and the pages.

Errors: `AccountError` carries a sentence for the person and, for forms, a message per field;
the commands print it, the API answers with it, the pages show it beside the field. The rules
kept here: a new password is long enough and not the account's name; a new password, disabling
and signing out end every session of the account (its API tokens keep working until revoked);
and an enabled administrator always remains. A new API token holds the scopes chosen for it
(the admin scope for an administrator only) and may expire a number of days after it is made.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from flask import current_app

from core.extensions import db
from core.models import ApiToken, User
from core.models.base import utcnow
from webapp.auth import throttle
from webapp.auth.scopes import scope_problem

NAME_MAX_LENGTH = 100
TOKEN_MAX_DAYS = 3650

WRONG_CURRENT_PASSWORD = (
    "Your current password is not right. Type it again; if you forgot it, ask an administrator "
    "to set a new one."
)
PASSWORDS_DIFFER = "The two new passwords differ. Type the same new password in both fields."
LAST_ADMIN_DEMOTED = (
    "{name} is the only administrator, so it keeps the admin role. Make another account an "
    "administrator (or enable a disabled one) first."
)
LAST_ADMIN_DISABLED = (
    "{name} is the only administrator, so it cannot be disabled. Make another account an "
    "administrator (or enable a disabled one) first."
)


class AccountError(Exception):
    """A change to an account that is refused: `message` says why and what to do.

    `fields` maps a form field (camelCase, as in the API) to its messages; `status` is the HTTP
    status the API answers with.
    """

    def __init__(self, message: str, fields: dict | None = None, status: int = 400):
        super().__init__(message)
        self.message = message
        self.fields = fields or {}
        self.status = status


def find_account(name: str) -> User | None:
    """Return the account with this exact name, or None."""
    return db.session.scalar(db.select(User).filter_by(name=name))


def generate_password() -> str:
    """Return a new random password of 16 URL-safe characters."""
    return secrets.token_urlsafe(12)


def password_problem(password: str, name: str) -> str | None:
    """Return why a new password may not be used, or None when it may."""
    shortest = current_app.config["PASSWORD_MIN_LENGTH"]
    if len(password) < shortest:
        return f"Use at least {shortest} characters for the password."
    if password.strip().lower() == name.strip().lower():
        return "The password must not be the account's name. Choose another."
    return None


def check_new_password(password: str, name: str, field: str = "password") -> None:
    """Raise AccountError (on `field`) when the new password may not be used."""
    problem = password_problem(password, name)
    if problem:
        raise AccountError(problem, {field: [problem]})


def create_account(
    name: str, password: str | None = None, admin: bool = False
) -> tuple[User, str | None]:
    """Store a new account; return it and its generated password (None when one was given)."""
    name = (name or "").strip()
    if not name:
        raise AccountError("Give the account a name.", {"name": ["A name is required."]})
    if len(name) > NAME_MAX_LENGTH:
        message = f"Use at most {NAME_MAX_LENGTH} characters."
        raise AccountError("The name is too long.", {"name": [message]})
    if find_account(name) is not None:
        message = f"An account named {name!r} already exists."
        raise AccountError(message, {"name": [message]}, status=409)
    generated = generate_password() if password is None else None
    if password is not None:
        check_new_password(password, name)
    user = User.make(name, password or generated, admin=admin)
    db.session.add(user)
    db.session.commit()
    return user, generated


def set_password(user: User, password: str | None = None) -> str | None:
    """Give the account a new password and end its sessions; return it when generated.

    Failed sign-ins of the name are forgotten too, so a locked-out person can sign in at once.
    """
    generated = generate_password() if password is None else None
    if password is not None:
        check_new_password(password, user.name)
    user.set_password(password or generated)
    user.end_sessions()
    db.session.commit()
    throttle.clear_failures(user.name)
    return generated


def change_own_password(
    user: User, current: str, new: str, confirm: str, address: str | None
) -> None:
    """Change a person's own password, which needs the current one; end their sessions.

    The current password is guarded as sign-in is: a wrong one counts as a failed sign-in of
    the name, and while the name (or the address) is locked it is refused before any hash is
    checked, so a borrowed session cannot be used to guess it without limit.
    """
    lock = throttle.find_lock(user.name, address)
    if lock is not None:
        message = throttle.describe(lock, user.name)
        raise AccountError(message, {"currentPassword": [message]}, status=429)
    if not user.check_password(current or ""):
        throttle.note_failure(user.name, address)
        raise AccountError(WRONG_CURRENT_PASSWORD, {"currentPassword": [WRONG_CURRENT_PASSWORD]})
    check_new_password(new or "", user.name, field="newPassword")
    if new != confirm:
        raise AccountError(PASSWORDS_DIFFER, {"confirmPassword": [PASSWORDS_DIFFER]})
    set_password(user, new)


def create_token(
    user: User, name: str, scopes: list[str], expires_in_days: int | None = None
) -> tuple[ApiToken, str]:
    """Store a new API token of the account; return it and its value, shown only once."""
    problem = scope_problem(user, scopes)
    if problem:
        raise AccountError(problem, {"scopes": [problem]})
    expires_at = utcnow() + timedelta(days=expires_in_days) if expires_in_days else None
    row, token = ApiToken.make(user, name, sorted(set(scopes)), expires_at)
    db.session.add(row)
    db.session.commit()
    return row, token


def end_sessions(user: User) -> None:
    """Sign the account out of every browser at once."""
    user.end_sessions()
    db.session.commit()


def record_sign_in(user: User) -> None:
    """Note when the account last signed in (shown on the Users page)."""
    user.last_signed_in_at = utcnow()
    db.session.commit()


def other_admins(user: User) -> int:
    """Return how many enabled administrators there are besides this account."""
    others = db.session.scalars(
        db.select(User).filter(User.id != user.id, User.disabled.is_(False))
    )
    return sum(1 for other in others if other.is_admin)


def set_disabled(user: User, disabled: bool) -> None:
    """Disable an account (ending its sessions and tokens) or enable it again.

    The last enabled administrator cannot be disabled; enabling forgets failed sign-ins.
    """
    if disabled and not user.disabled and user.is_admin and other_admins(user) == 0:
        raise AccountError(LAST_ADMIN_DISABLED.format(name=user.name), status=409)
    if disabled and not user.disabled:
        user.end_sessions()
    user.disabled = disabled
    db.session.commit()
    if not disabled:
        throttle.clear_failures(user.name)


def set_admin(user: User, admin: bool) -> None:
    """Grant or take the admin role; the last enabled administrator keeps it."""
    if not admin and user.is_admin and not user.disabled and other_admins(user) == 0:
        raise AccountError(LAST_ADMIN_DEMOTED.format(name=user.name), status=409)
    user.roles = ["user", "admin"] if admin else ["user"]
    db.session.commit()

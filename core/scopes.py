"""The scopes an API token may hold, and which an account may give its tokens; what each scope
lets a request do is checked on the web side (``webapp/auth/scopes.py``)."""

from __future__ import annotations

SCOPES = {
    "chat": "Conversations, answers, uploads, models and tools, and your own settings.",
    "admin": "The administrators' API: accounts, providers, plugins, usage and health.",
}
DEFAULT_SCOPES = ("chat",)


def scopes_allowed(user) -> list[str]:
    """Return every scope a token of this account may hold."""
    return [scope for scope in SCOPES if scope != "admin" or user.is_admin]

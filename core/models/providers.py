"""Model providers an admin configures: an OpenAI-compatible endpoint, its key and its models;
and the rows a process keeps until any process commits a change to one."""

from __future__ import annotations

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from core.extensions import db
from core.kept import find_kept, watch
from core.models.base import id_column
from core.models.encrypted import EncryptedText

# Raised (INCR) after every commit that wrote a provider row, in whichever process wrote it.
VERSION_KEY = "lookout:providers:version"

# A model's settings when its entry has none (README: "Models and their settings").
DEFAULT_CONTEXT_TOKENS = 16384
DEFAULT_MAX_TOKENS = 2048


class Provider(db.Model):
    """A provider; models is a list of {"name": str, "tools": bool, "maxTokens": int,
    "contextTokens": int} (the last two optional: see ``max_tokens`` and ``context_tokens``)."""

    __tablename__ = "providers"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(100), unique=True, nullable=False)
    kind: Mapped[str] = mapped_column(String(50), nullable=False, default="openai-compatible")
    base_url: Mapped[str] = mapped_column(String(500), nullable=False)
    api_key: Mapped[str | None] = mapped_column(EncryptedText)
    models: Mapped[list] = mapped_column(JSON, nullable=False, default=list)


def split_model_id(model_id: str) -> tuple[str, str]:
    """Return (provider name, model name) of an id "<provider>/<model>", split at the first "/"."""
    provider, sep, model = model_id.partition("/")
    if not sep or not provider or not model:
        raise ValueError(f"A model id looks like provider/model, not {model_id!r}.")
    return provider, model


def find_model(model_id: str) -> tuple[Provider, dict] | None:
    """Return the provider and the model entry of a model id, or None when there is none."""
    try:
        provider_name, model_name = split_model_id(model_id)
    except ValueError:
        return None
    provider = db.session.scalar(db.select(Provider).filter_by(name=provider_name))
    if provider is None:
        return None
    model = next((m for m in provider.models or [] if m.get("name") == model_name), None)
    return None if model is None else (provider, model)


def max_tokens(model: dict) -> int:
    """Return the most tokens one answer of the model may take (sent as ``max_tokens``)."""
    return int(model.get("maxTokens") or DEFAULT_MAX_TOKENS)


def context_tokens(model: dict) -> int:
    """Return the model's context size in tokens: its prompt and its answer together."""
    return int(model.get("contextTokens") or DEFAULT_CONTEXT_TOKENS)


def find_kept_model(model_id: str) -> tuple[Provider, dict] | None:
    """Return ``find_model(model_id)``, read once per process until a provider changes.

    A model step read the provider's row and decrypted its key every time; now one Redis GET
    (``VERSION_KEY``) tells whether what the process read still holds. The row is kept
    detached, with every column loaded. Without Redis, the row is read as before.
    """
    return find_kept(VERSION_KEY, model_id, lambda: _detached(find_model(model_id)))


def _detached(found: tuple[Provider, dict] | None) -> tuple[Provider, dict] | None:
    if found is not None:
        db.session.expunge(found[0])  # a commit would expire its columns
    return found


watch(Provider, VERSION_KEY)

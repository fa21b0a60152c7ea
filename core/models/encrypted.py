"""Secrets at rest: provider API keys and plugin options and settings are stored encrypted.

Values are Fernet tokens (AES-128-CBC with HMAC-SHA256, from the ``cryptography`` package)
under keys derived with HKDF-SHA256 from ``SECRETS_KEY``, or from ``SECRET_KEY`` when that is
unset. ``SECRETS_KEY`` may list several comma-separated passphrases: the first encrypts, every
one decrypts, so a key is rotated by putting the new one first and re-saving.

Two column types use this: ``EncryptedText`` (a string, such as an API key) and
``EncryptedJSON`` (a whole JSON document, such as a plugin's options, kept in a JSON column as
one string). Values stored before encryption came in are read as they are and encrypted when
next saved; migration 0003 encrypts them at upgrade. A value no key opens (the key changed)
reads as missing, with a warning in the log, so the pages ask for it again instead of failing.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app
from sqlalchemy import JSON, Text
from sqlalchemy.types import TypeDecorator

PREFIX = "enc:v1:"
log = logging.getLogger("lookout.secrets")


def _derive(passphrase: str) -> Fernet:
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"lookout secrets at rest"
    ).derive(passphrase.encode())
    return Fernet(base64.urlsafe_b64encode(key))


@functools.lru_cache(maxsize=8)
def _box(passphrases: str) -> MultiFernet:
    return MultiFernet([_derive(p.strip()) for p in passphrases.split(",") if p.strip()])


def secrets_box() -> MultiFernet:
    """Return the current app's encrypter (first key) and decrypter (every key)."""
    config = current_app.config
    return _box(config.get("SECRETS_KEY") or config["SECRET_KEY"])


def encrypt(text: str) -> str:
    """Return ``text`` encrypted, as stored."""
    return PREFIX + secrets_box().encrypt(text.encode()).decode()


def decrypt(stored: str) -> str | None:
    """Return the text of a stored value; a value stored before encryption is returned as is.

    None when no key opens it.
    """
    if not stored.startswith(PREFIX):
        return stored
    try:
        return secrets_box().decrypt(stored[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        log.warning(
            "A stored secret could not be decrypted with SECRETS_KEY (or SECRET_KEY): the key "
            "changed. It reads as missing until it is entered again; list the old key after the "
            "new one in SECRETS_KEY to keep reading it."
        )
        return None


def is_encrypted(stored: Any) -> bool:
    """Whether a raw stored value is encrypted."""
    return isinstance(stored, str) and stored.startswith(PREFIX)


class EncryptedText(TypeDecorator):
    """A text column whose values are stored encrypted."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect) -> str | None:
        return None if value is None else encrypt(value)

    def process_result_value(self, value: str | None, dialect) -> str | None:
        return None if value is None else decrypt(value)


class EncryptedJSON(TypeDecorator):
    """A JSON column whose document is stored encrypted, as one JSON string.

    A document no key opens reads as ``{}``: the plugin's defaults, or a form to fill again.
    """

    impl = JSON
    cache_ok = True

    def process_bind_param(self, value: Any, dialect) -> Any:
        return None if value is None else encrypt(json.dumps(value))

    def process_result_value(self, value: Any, dialect) -> Any:
        if not is_encrypted(value):  # stored before encryption: the document itself
            return value
        text = decrypt(value)
        return {} if text is None else json.loads(text)

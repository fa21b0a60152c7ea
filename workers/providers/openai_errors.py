"""Turns openai SDK and httpx2 exceptions into ProviderError sentences that never hold the key.

Who reads them: a user reads a stream's errors, which name the provider, never its base URL
(it may hold credentials); an admin testing a connection reads its address without credentials.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx2
import openai

from tools.rates import retry_after
from workers.providers.base import ProviderError

EXPLANATION_LIMIT = 300


@dataclass(frozen=True)
class ProviderIdentity:
    """What an error message may name: the provider, its base URL and the key to hide."""

    name: str
    base_url: str
    api_key: str

    def redact(self, text: str) -> str:
        """``text`` with the API key, the base URL and its credentials replaced, in case a
        provider (or a library's message) echoes them back."""
        secrets = [self.api_key, self.base_url, *_credentials(self.base_url)]
        for secret in sorted(secrets, key=len, reverse=True):
            if len(secret) >= 4:
                text = text.replace(secret, "[redacted]")
        return text

    @property
    def address(self) -> str:
        """The base URL as an admin may read it: scheme, host, port and path, without the
        credentials or the query it may carry."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}".rstrip("/")


def _credentials(base_url: str) -> list[str]:
    """The user name and password written into a base URL, if any."""
    try:
        parts = urlsplit(base_url)
        return [p for p in (parts.username, parts.password) if p]
    except ValueError:
        return []


def translate(
    exc: Exception,
    who: ProviderIdentity,
    model: str | None,
    streaming: bool,
    admin: bool = False,
) -> ProviderError:
    """The ProviderError for an openai or httpx2 exception (a ValueError: an unreadable reply);
    ``admin`` when an admin reads it (a connection test), who may see the provider's address."""
    name = who.name
    # A connection never made is unreachable, not slow: no "busy" for a dropped SYN.
    connecting = any(isinstance(e, httpx2.ConnectTimeout) for e in (exc, exc.__cause__))
    if not connecting and isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException):
        return ProviderError(
            f"The provider {name} did not answer in time. Try again later; if it keeps "
            "happening, the model may be overloaded or too slow for the configured timeout.",
            timed_out=True,
        )
    if connecting or isinstance(
        exc, openai.APIConnectionError | httpx2.TransportError | httpx2.StreamError
    ):
        if streaming:
            return ProviderError(
                f"The connection to the provider {name} broke during the reply. Try again.",
                retryable=True,
            )
        if admin:
            return ProviderError(
                f"Lookout could not reach the provider {name} at {who.address}. Check that it "
                "is running and that the base URL in the provider settings is right.",
                retryable=True,
            )
        return ProviderError(
            f"Lookout could not reach the provider {name}. Try again later; if it keeps "
            "failing, ask an admin to check that it is running and its base URL.",
            retryable=True,
        )
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, who, model, admin)
    if isinstance(exc, openai.APIError):
        return stream_error(exc.body, who)
    if isinstance(exc, ValueError):
        return unreadable(who)
    return ProviderError(f"The provider {name} failed: {who.redact(str(exc))}")


def unreadable(who: ProviderIdentity) -> ProviderError:
    """The error for a reply that is not the chat-completions format."""
    return ProviderError(
        f"The provider {who.name} sent a reply Lookout could not read. Check that it is "
        "OpenAI-compatible and that the base URL points at its API (often ending in /v1)."
    )


def cut_off(who: ProviderIdentity) -> ProviderError:
    """The error for a stream that ended (closed, or a bare ``[DONE]``) with no finish reason:
    the model did not finish its answer (a proxy lost its upstream, a server interrupted it)."""
    return ProviderError(
        f"The provider {who.name} closed the stream before the answer was finished. Try again.",
        retryable=True,
    )


def empty_answer(who: ProviderIdentity) -> ProviderError:
    """The error for a stream that said nothing at all (an HTTP 200 with no events), which is
    how some servers (llama.cpp) answer a prompt longer than the model's context."""
    return ProviderError(
        f"The provider {who.name} sent an empty answer. The prompt may exceed the model's "
        "context: start a new conversation or send less text; if it keeps happening, ask an "
        "admin to check the model's context size in the provider settings.",
    )


def length_reached(who: ProviderIdentity, max_tokens: int | None) -> ProviderError:
    """The error for an answer the model stopped at its length limit (``finish_reason``
    "length"); the turn keeps the text with "The answer above was cut off." before it."""
    limit = f" of {max_tokens} tokens" if max_tokens else ""
    return ProviderError(
        f"The model reached its length limit{limit}. Press Continue to have it go on, or ask "
        "for a shorter answer; an admin can raise the model's max tokens in the provider "
        "settings.",
    )


def stopped_early(who: ProviderIdentity, reason: str) -> ProviderError:
    """The error for an answer ended for another reason than a finish (``content_filter``…)."""
    shown = " ".join(who.redact(reason).split())[:40]
    return ProviderError(
        f'The provider {who.name} stopped the answer before it was finished (reason "{shown}"). '
        "Try again, or ask differently.",
    )


def no_first_token(who: ProviderIdentity, seconds: float) -> ProviderError:
    """The error for a model that had not started its answer within ``seconds`` (its server
    busy with other requests, keep-alive pings or not)."""
    return ProviderError(
        f"The provider {who.name} did not start answering within {seconds:g} seconds; it may be "
        "busy with other requests. Try again in a few minutes.",
        timed_out=True,
    )


def answer_too_slow(who: ProviderIdentity, seconds: float) -> ProviderError:
    """The error for an answer still streaming ``seconds`` after it was asked for."""
    return ProviderError(
        f"The provider {who.name} was still answering after {seconds:g} seconds, the most one "
        "answer may take. Ask for a shorter answer, or ask an admin to raise "
        "MODEL_ANSWER_SECONDS.",
        timed_out=True,
    )


def _status_error(
    exc: openai.APIStatusError, who: ProviderIdentity, model: str | None, admin: bool
) -> ProviderError:
    name, status = who.name, exc.status_code
    if status in (401, 403):
        fix = (
            "Edit the provider, enter its current key in API key, save and test again."
            if admin
            else "An admin can update it in the provider settings."
        )
        return ProviderError(f"The provider {name} rejected its API key. {fix}", status=status)
    if status == 404 and model is not None:
        return ProviderError(
            f"The model {model} is not available from {name}. An admin can check the model "
            "name and the base URL in the provider settings.",
            status=status,
        )
    if status == 404:
        where = f" at {who.address}/models" if admin else ""
        return ProviderError(
            f"The provider {name} has no model list{where}. Check that the base URL points "
            "at its API (often ending in /v1).",
            status=status,
        )
    if status == 429:
        return ProviderError(
            f"The provider {name} rate limit was reached. Wait a minute and try again.",
            retryable=True,
            status=status,
            retry_after=retry_after(exc.response.headers),
        )
    if status >= 500:
        # Its own words often name the cause an admin can fix (out of memory, model not loaded).
        explanation = _explanation(exc.body, who)
        said = f' {name} said: "{explanation}".' if explanation else ""
        fix = (
            "Check that the provider's server is running well, then test again."
            if admin
            else "Try again later; if it keeps failing, ask an admin to check the provider."
        )
        return ProviderError(
            f"The provider {name} failed (HTTP {status}).{said} {fix}",
            retryable=True,
            status=status,
            retry_after=retry_after(exc.response.headers),
        )
    return ProviderError(
        f"The provider {name} refused the request (HTTP {status}){_said(exc.body, who, admin)}",
        status=status,
    )


def stream_error(error: object, who: ProviderIdentity) -> ProviderError:
    """An error event inside a stream; a numeric ``code`` in it is kept as the status."""
    code = error.get("code") if isinstance(error, dict) else None
    status = int(code) if isinstance(code, int | str) and str(code).isdigit() else None
    retryable = status is not None and (status == 429 or status >= 500)
    return ProviderError(
        f"The provider {who.name} reported an error during the reply{_said(error, who)}",
        retryable=retryable,
        status=status,
    )


def _explanation(body: object, who: ProviderIdentity) -> str | None:
    """The message in a provider's error body, on one line, cut and redacted; or None."""
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    if not isinstance(message, str) or not message.strip():
        return None
    return " ".join(who.redact(message).split())[:EXPLANATION_LIMIT]


def _said(body: object, who: ProviderIdentity, admin: bool = False) -> str:
    """``. <name> said: "<explanation>"`` cut and redacted, or a next step without one (for
    the admin testing the connection, a step they take themselves)."""
    text = _explanation(body, who)
    if text is None and admin:
        return (
            f". Check the base URL ({who.address}) and the API key in the provider settings, "
            "then test again."
        )
    if text is None:
        return ". Try again later, or ask an admin to check the provider settings."
    return f'. {who.name} said: "{text}"'

"""Turns openai SDK and httpx2 exceptions into ProviderError sentences that never hold the key."""

from __future__ import annotations

from dataclasses import dataclass

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
        """``text`` with the API key replaced, in case a provider echoes it back."""
        if len(self.api_key) >= 4:
            text = text.replace(self.api_key, "[redacted]")
        return text


def translate(
    exc: Exception, who: ProviderIdentity, model: str | None, streaming: bool
) -> ProviderError:
    """The ProviderError for an openai or httpx2 exception (a ValueError: an unreadable reply)."""
    name = who.name
    if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException):
        return ProviderError(
            f"The provider {name} did not answer in time. Try again later; if it keeps "
            "happening, the model may be overloaded or too slow for the configured timeout.",
        )
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError | httpx2.StreamError):
        if streaming:
            return ProviderError(
                f"The connection to the provider {name} broke during the reply. Try again.",
                retryable=True,
            )
        return ProviderError(
            f"Lookout could not reach the provider {name} at {who.base_url}. Check that it is "
            "running and that an admin set the right base URL in the provider settings.",
            retryable=True,
        )
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, who, model)
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
    """The error for a stream that ended cleanly before the model finished its answer."""
    return ProviderError(
        f"The provider {who.name} closed the stream before the answer was finished. Try again.",
        retryable=True,
    )


def _status_error(
    exc: openai.APIStatusError, who: ProviderIdentity, model: str | None
) -> ProviderError:
    name, status = who.name, exc.status_code
    if status in (401, 403):
        return ProviderError(
            f"The provider {name} rejected its API key. An admin can update it in the "
            "provider settings.",
            status=status,
        )
    if status == 404 and model is not None:
        return ProviderError(
            f"The model {model} is not available from {name}. An admin can check the model "
            "name and the base URL in the provider settings.",
            status=status,
        )
    if status == 404:
        return ProviderError(
            f"The provider {name} has no model list at {who.base_url}/models. Check that the "
            "base URL points at its API (often ending in /v1).",
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
        return ProviderError(
            f"The provider {name} failed (HTTP {status}).{said} Try again later; if it keeps "
            "failing, ask an admin to check the provider.",
            retryable=True,
            status=status,
            retry_after=retry_after(exc.response.headers),
        )
    return ProviderError(
        f"The provider {name} refused the request (HTTP {status}){_said(exc.body, who)}",
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


def _said(body: object, who: ProviderIdentity) -> str:
    """``. <name> said: "<explanation>"`` cut and redacted, or a next step without one."""
    text = _explanation(body, who)
    if text is None:
        return ". Try again later, or ask an admin to check the provider settings."
    return f'. {who.name} said: "{text}"'

"""What every model provider speaks: tool specs, streamed events, errors and the ChatProvider role.

Errors raised by a provider::

    Exception
    ├── ProviderError        a sentence for the user (bad key, unknown model, rate limit, timeout,
    │                        unreachable, HTTP failure, unreadable reply); ``retryable`` tells
    │                        whether the same request may succeed later
    └── ProviderCancelled    the turn was cancelled; the stream was closed (not a failure)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from tools.api import Signal

# Chat messages in OpenAI's format, as the prompt builder makes them:
# {"role": "system" | "user" | "assistant" | "tool", "content": ..., "tool_calls": [...],
#  "tool_call_id": ...}
ChatMessage = dict[str, Any]


class ProviderError(Exception):
    """A provider failure, with a message that says what happened and what to do next."""

    def __init__(
        self,
        message: str,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.timed_out = timed_out
        # What the call cost when the stream ended unfinished (cut, at its length limit).
        self.usage: Usage | None = None


class ProviderCancelled(Exception):
    """The caller's signal tripped; the stream was closed and will yield no more."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its name, description and JSON Schema of its input."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        """The tool in OpenAI's chat-completions ``tools`` format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, as it arrives."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning, as it arrives: shown folded, never as the answer."""

    text: str


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for; ``arguments`` is None when ``raw_arguments`` is not a
    JSON object (the caller stores the tool error "The arguments were not valid JSON.")."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str


@dataclass(frozen=True)
class SourceEvent:
    """A citation the provider itself reported (e.g. a ``url_citation`` annotation)."""

    url: str
    title: str | None


@dataclass(frozen=True)
class Usage:
    """Token counts of one model call: as the provider reported them, or ``estimated`` from the
    text's characters when it reported none; ``reasoning_tokens`` is the part of
    ``output_tokens`` the model spent reasoning."""

    input_tokens: int
    output_tokens: int
    estimated: bool = False
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class Finished:
    """The stream ended with a finished answer; ``reason`` as the provider gave it ("stop" or
    "tool_calls"). Any other ending (no reason, "length", "content_filter") is a ProviderError:
    an answer is complete only when the model said it finished."""

    reason: str


ProviderEvent = TextDelta | ReasoningDelta | ToolCallRequest | SourceEvent | Usage | Finished


class ChatProvider(Protocol):
    """A model provider: streams one model call and lists its models."""

    name: str

    def stream(
        self,
        model: str,
        messages: list[ChatMessage],
        tools: list[ToolSpec] | None = None,
        signal: Signal | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ProviderEvent]:
        """Yield TextDelta, ReasoningDelta and SourceEvent as they arrive, then every
        ToolCallRequest, then Usage when reported, then Finished; ``max_tokens`` bounds the
        answer's length.

        Raises ProviderError on failure (after the first event, never retried) and
        ProviderCancelled once ``signal`` trips (a cancel or its deadline): the stream stops
        through the signal's own hooks, at once, even while the provider is silent.
        """
        ...

    def list_models(self) -> list[str]:
        """The model ids the provider offers; raises ProviderError (the admin's connection test)."""
        ...

    def close(self) -> None:
        """Release the provider's connections."""
        ...

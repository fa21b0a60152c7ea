"""Model providers: the ChatProvider role, its events and errors, and the OpenAI client."""

from workers.providers.base import (
    ChatMessage,
    ChatProvider,
    Finished,
    ProviderCancelled,
    ProviderError,
    ProviderEvent,
    ReasoningDelta,
    SourceEvent,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from workers.providers.openai_compatible import OpenAICompatibleProvider, wait_unless_cancelled

__all__ = [
    "ChatMessage",
    "ChatProvider",
    "Finished",
    "OpenAICompatibleProvider",
    "ProviderCancelled",
    "ProviderError",
    "ProviderEvent",
    "ReasoningDelta",
    "SourceEvent",
    "TextDelta",
    "ToolCallRequest",
    "ToolSpec",
    "Usage",
    "wait_unless_cancelled",
]

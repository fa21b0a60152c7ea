"""Token counts estimated from characters, for servers that report none and for prompt budgets.

One ratio for the whole app: ``CHARS_PER_TOKEN`` characters make a token. It is OpenAI's own
rule of thumb for English (about 4 characters a token); text in other scripts, and code, costs
more tokens a character, so a budget built on it keeps a margin (see ``workers/prompt_budget``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
# Of the context left after the answer's max_tokens, the part kept free for the error of
# estimating tokens from characters (text in other scripts, and code, costs more).
CONTEXT_MARGIN = 0.1
# The fewest characters a prompt budget allows, however small the model's context.
MIN_PROMPT_CHARS = 1000


def estimate_tokens(chars: int) -> int:
    """Return the tokens ``chars`` characters are estimated to cost (at least one for any)."""
    return 0 if chars <= 0 else max(1, -(-chars // CHARS_PER_TOKEN))


def message_chars(messages: Iterable[dict[str, Any]]) -> int:
    """Return the characters of chat messages as a model reads them: contents and tool calls."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif content is not None:
            total += len(json.dumps(content, ensure_ascii=False))
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            total += len(function.get("name") or "") + len(function.get("arguments") or "")
    return total


def tool_chars(tools: Iterable[dict[str, Any]]) -> int:
    """Return the characters of tool definitions in OpenAI's format, as they are sent."""
    return sum(len(json.dumps(tool, ensure_ascii=False)) for tool in tools)


def prompt_chars(context_tokens: int, max_tokens: int, tools_chars: int = 0) -> int:
    """Return the characters a prompt may hold: the context less the answer's ``max_tokens``
    (at most half the context) and a margin, at ``CHARS_PER_TOKEN``, less the tools sent."""
    room = context_tokens - min(max_tokens, context_tokens // 2)
    budget = int(room * (1 - CONTEXT_MARGIN)) * CHARS_PER_TOKEN - tools_chars
    return max(MIN_PROMPT_CHARS, budget)

"""A request's messages as a new conversation of the caller's: its history, and the question.

Each request to ``POST /v1/chat/completions`` makes one conversation, titled "API: " and the
start of the last user message, listed with the user's other conversations (so they can read
what was searched and read, and delete it). System and developer messages have no place of
their own in a Lookout conversation: their text opens the next user message. Client-side tool
messages are refused, since Lookout runs its own tools.
"""

from __future__ import annotations

from typing import Any

from core.extensions import db
from core.models import Conversation, Message
from core.turn.parts import text_part
from webapp.api.schemas.turns import MAX_CONTENT
from webapp.openai_api.errors import OpenAIError

TITLE_PREFIX = "API: "
TITLE_CHARS = 60
INSTRUCTIONS = ("system", "developer")
CLIENT_TOOLS = (
    "Lookout runs its own tools (web search and page reading) and cannot call tools of the "
    "client's. Leave out {what}; to choose Lookout's tools, name them in lookout.tools."
)


def _is_text_content(part: Any) -> bool:
    # An OpenAI request's content part, not a Lookout message part (core.turn.parts).
    return (
        isinstance(part, dict)
        and set(part) == {"type", "text"}
        and part["type"] == "text"
        and isinstance(part["text"], str)
    )


def message_text(message: dict[str, Any], index: int) -> str:
    """Return a message's text: its string, or its text parts joined; 400 for anything else."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(_is_text_content(p) for p in content):
        return "".join(p["text"] for p in content)
    raise OpenAIError(
        "Lookout reads messages as text: send content as a string or a list of "
        '{"type": "text", "text": ...} parts (upload files with POST /api/uploads instead).',
        400,
        f"messages.{index}.content",
        "unsupported_content",
    )


def read_history(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Return the messages as (role, text), user or assistant, instructions folded into the
    next user message; 400 for tool messages or a last message that is not the user's."""
    history: list[tuple[str, str]] = []
    instructions: list[str] = []
    for index, message in enumerate(messages):
        role = message["role"]
        if role in ("tool", "function") or message.get("tool_calls"):
            raise OpenAIError(
                CLIENT_TOOLS.format(what="tool calls and tool messages"),
                400,
                f"messages.{index}",
                "tools_not_supported",
            )
        text = message_text(message, index)
        if role in INSTRUCTIONS:
            instructions.append(text)
        elif role == "user":
            history.append(("user", "\n\n".join([*instructions, text]).strip()))
            instructions = []
        else:
            history.append(("assistant", text))
    if not history or history[-1][0] != "user" or instructions:
        raise OpenAIError(
            "The last message must be the user's: it is the question Lookout answers.",
            400,
            "messages",
            "invalid_messages",
        )
    question = history[-1][1]
    if not question or len(question) > MAX_CONTENT:
        raise OpenAIError(
            f"The last user message must have 1 to {MAX_CONTENT:,} characters. Shorten it, or "
            "upload long text as a file with POST /api/uploads.",
            400,
            f"messages.{len(messages) - 1}.content",
            "invalid_messages",
        )
    return history


def make_conversation(
    owner_id: str, messages: list[dict[str, Any]]
) -> tuple[Conversation, Message]:
    """Add (uncommitted) a conversation holding the earlier messages; return it with the
    question, not added yet: starting the turn stores it."""
    history = read_history(messages)
    question = history[-1][1]
    conversation = Conversation(
        owner_id=owner_id, title=(TITLE_PREFIX + " ".join(question.split()))[:TITLE_CHARS]
    )
    db.session.add(conversation)
    db.session.flush()
    parent_id = None
    for role, text in history[:-1]:
        message = Message(
            conversation_id=conversation.id,
            parent_id=parent_id,
            role=role,
            parts=[text_part(text)],
            status="completed",
        )
        db.session.add(message)
        db.session.flush()
        parent_id = message.id
    user_message = Message(
        conversation_id=conversation.id,
        parent_id=parent_id,
        role="user",
        parts=[text_part(question)],
        status="completed",
    )
    return conversation, user_message

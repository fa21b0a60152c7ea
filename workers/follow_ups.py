"""Follow-up questions: after an answer, one short model call for three questions to ask next.

Off unless an admin ticks "Follow-ups" for the model (a provider's model setting ``followUps``):
it costs a model call per answer. The call sees the user's question and the answer only (both
cut short), offers no tools, and is bounded in tokens and time; what it says is read as plain
lines, stripped of list markers and markup, and a line longer than a short question is dropped.
A failed or cancelled call loses nothing and shows nothing.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from tools.api import Signal
from workers.providers import (
    ChatProvider,
    ProviderCancelled,
    ProviderError,
    TextDelta,
    Usage,
)

log = logging.getLogger("lookout.turns")

COUNT = 3
MAX_QUESTION_CHARS = 120
MAX_TOKENS = 200
TIMEOUT_SECONDS = 30
# What of the question and the answer the call sees: enough to know the subject.
QUESTION_CHARS = 2000
ANSWER_CHARS = 4000
# The most text the call may stream before it is read: MAX_TOKENS is a request, not a bound.
MAX_REPLY_CHARS = 4 * MAX_TOKENS * 2
INSTRUCTION = (
    f"Suggest {COUNT} short follow-up questions the user might ask next about this exchange. "
    f"Write one question per line, each under {MAX_QUESTION_CHARS} characters, in the user's "
    "language, as plain text: no numbering, no bullets, no Markdown, nothing else."
)
# List markers and Markdown a model writes anyway, stripped from each line.
_MARKER = re.compile(r"^\s*(?:[-*•+>#]+|\d+[.)]|\(\d+\))\s*")
_MARKUP = re.compile(r"[*_`#<>\[\]]")


@dataclass
class FollowUps:
    """The questions the call offered (none when it failed) and what it cost."""

    questions: list[str]
    usage: Usage | None = None


def follow_ups_asked(model: dict[str, Any]) -> bool:
    """Return whether the admin asked for follow-up questions after this model's answers."""
    return model.get("followUps") is True


def ask_follow_ups(
    provider: ChatProvider, model_name: str, question: str, answer: str, signal: Signal
) -> FollowUps:
    """Return up to three follow-up questions for ``answer`` to ``question``; none when the
    call fails, is cancelled through ``signal`` or says nothing usable."""
    messages = [
        {"role": "user", "content": question[:QUESTION_CHARS]},
        {"role": "assistant", "content": answer[:ANSWER_CHARS]},
        {"role": "user", "content": INSTRUCTION},
    ]
    text, usage = "", None
    try:
        for event in provider.stream(model_name, messages, None, signal, MAX_TOKENS):
            if isinstance(event, TextDelta):
                text += event.text
                if len(text) > MAX_REPLY_CHARS:
                    signal.cancel()
            elif isinstance(event, Usage):
                usage = event
    except ProviderCancelled:
        if len(text) <= MAX_REPLY_CHARS:
            return FollowUps([], usage)
    except ProviderError as exc:
        log.warning("follow-up questions failed: %s", exc.message)
        return FollowUps([], exc.usage)
    return FollowUps(read_questions(text), usage)


def read_questions(text: str) -> list[str]:
    """Return the questions in a model's reply: plain lines, without markers or markup, each
    at most ``MAX_QUESTION_CHARS`` long, no repeats, at most ``COUNT``."""
    questions: list[str] = []
    for line in text.splitlines():
        line = _MARKUP.sub("", _MARKER.sub("", line))
        line = " ".join(line.split()).strip("\"'“”")
        if line and len(line) <= MAX_QUESTION_CHARS and line not in questions:
            questions.append(line)
        if len(questions) == COUNT:
            break
    return questions

"""How much an MCP server may send: each answer, a session's answers in all, the tools kept.

A server is an attacker's: without these, a 2 GB JSON body, an event stream or a stdio line
that never ends, or a listing of 100,000 tools was read and held until the call's deadline.
``AnswerLimit`` counts one session's bytes (a listing or a call each open their own) as they
arrive, before anything holds or parses them, with the messages they end, and says which
limit a server passed.
"""

from __future__ import annotations

MB = 1024 * 1024
# One message: a JSON body, one event of an event stream, one line from a stdio server. The
# model reads at most 100,000 characters of a result and a large server's whole listing (some
# 100 tools with their schemas) is a few hundred KB, so no real answer comes near 4 MB, while
# holding and parsing that much costs a worker little.
ANSWER_BYTES = 4 * MB
# All a session receives (answers, notifications, pings): four answers' worth.
SESSION_BYTES = 16 * MB
# The messages a session receives: a long call's progress notes, one a second for the longest
# deadline, are 300; a stream of small notes that never answers reached 16 MB only after
# minutes of the SDK's work (some 2,000 messages a second on a 2-core machine).
SESSION_MESSAGES = 10_000
# The tools a listing keeps, the first ones listed; a model is offered at most 128 a request.
LISTED_TOOLS = 500


class AnswerTooLarge(Exception):
    """A server passed a limit; ``str()`` names what it sent, in a user's words."""


class AnswerLimit:
    """The bytes one session received; ``exceeded`` says what a server sent past a limit."""

    def __init__(self) -> None:
        self.received = 0
        self.messages = 0
        self.exceeded: str | None = None

    def count(self, size: int, answer: int, messages: int = 0) -> None:
        """Add ``size`` bytes received that ended ``messages`` messages, the answer under way
        now being ``answer`` bytes long; raise ``AnswerTooLarge`` when one passes its limit."""
        self.received += size
        self.messages += messages
        if answer > ANSWER_BYTES:
            self.exceeded = f"an answer larger than {ANSWER_BYTES // MB} MB"
        elif self.received > SESSION_BYTES:
            self.exceeded = f"more than {SESSION_BYTES // MB} MB in answers to one request"
        elif self.messages > SESSION_MESSAGES:
            self.exceeded = f"more than {SESSION_MESSAGES:,} messages in answer to one request"
        if self.exceeded:
            raise AnswerTooLarge(self.exceeded)

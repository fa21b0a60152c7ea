"""A tool call's context (workers/context.py): what making it reads, and the reply's sources its
``ok`` result cites into, read only when that result cites (issue 29)."""

from __future__ import annotations

from sqlalchemy import event

from core.extensions import db
from core.models import ToolCall, Turn, TurnStep
from core.turn.events import SOURCE_ADDED
from core.turn.parts import source_part
from core.turn.state import turn_state
from tests.support.turns import stored_turn
from tools.api import Citation, Signal, Tool
from workers.context import make_tool_context
from workers.offer import Offered


class Reads:
    """The statements sent that read the sources a turn cites (its steps' and calls')."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        event.listen(db.engine, "before_cursor_execute", self._sent)

    def _sent(self, _conn, _cursor, text: str, *_args) -> None:
        self.sent.append(text)

    def of_sources(self) -> int:
        """Return how many statements read the steps' sources or the calls' citations."""
        return sum("sources" in text and "citations" in text for text in self.sent)

    def close(self) -> None:
        event.remove(db.engine, "before_cursor_execute", self._sent)


def context_of_a_call(app, owner_id: str):
    """Store a running turn whose step 0 cited https://a.example/ and a call of it; return what
    ``make_tool_context`` returned for the call, and the reads it made."""
    turn_id = stored_turn(app, owner_id, "running", with_reply=True)
    cited = [source_part("https://a.example/", "A")]
    db.session.add(TurnStep(turn_id=turn_id, step=0, sources=cited))
    call = ToolCall(turn_id=turn_id, call_id="c1", step=0, position=0, name="echo", input={})
    db.session.add(call)
    db.session.commit()
    turn = db.session.get(Turn, turn_id)
    tool = Tool(name="echo", description="Echo.", input_schema=None, execute=lambda i, c: i)
    reads = Reads()
    try:
        made = make_tool_context(turn, call, Offered(tool, untrusted=False), Signal())
    finally:
        reads.close()
    return made, reads


def test_a_tool_call_reads_the_turns_sources_only_when_its_ok_result_cites(app, make_user):
    """Issue 29: every call read the turn's cited URLs before it ran; only a result that cites
    needs them."""
    owner = make_user("ada")
    with app.app_context():
        (ctx, sources, collected), reads = context_of_a_call(app, owner.id)
        assert reads.of_sources() == 0
        ctx.cite("https://a.example/", "Cited by the step")
        ctx.cite("https://b.example/", "New")
        reads = Reads()
        try:
            kept = sources.claim_all(collected.citations)
        finally:
            reads.close()
        assert reads.of_sources() == 1
        # The call keeps all it cited; the reply is sent only what it did not cite yet.
        assert [c["url"] for c in kept] == ["https://a.example/", "https://b.example/"]
        sources.claim_all([Citation("https://b.example/"), Citation("https://c.example/")])
        sent = turn_state(sources.turn.id).read()
        assert [data["url"] for _id, name, data in sent if name == SOURCE_ADDED] == [
            "https://b.example/",
            "https://c.example/",
        ]

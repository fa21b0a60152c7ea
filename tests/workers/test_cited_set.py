"""The turn's cited set, seeded by the step: a tool call's citations are checked against it, the
database read only when Redis lost the set (issue 29)."""

from __future__ import annotations

import re

from core.extensions import db, get_redis
from core.models import ToolCall, Turn
from core.turn import events
from core.turn.events import SOURCE_ADDED
from core.turn.state import key, load_pipelined_scripts, turn_state
from tests.support.fake_model import Reply
from tests.workers.test_tool_call_stop import Sends
from tests.workers.test_tool_context import Reads, context_of_a_call
from tools.api import Citation, Signal, Tool
from workers.context import make_tool_context
from workers.offer import Offered
from workers.runtime import get_watcher
from workers.steps import read_flags

STEP_CITED = "https://a.example/"  # what ``context_of_a_call``'s step 0 cited


def claimed(sources, urls: list[str]) -> tuple[list[str], int]:
    """Return the URLs the call keeps of its ``ok`` result citing ``urls``, and how many reads
    of the reply's sources the claim made."""
    reads = Reads()
    try:
        kept = sources.claim_all([Citation(url, url) for url in urls])
    finally:
        reads.close()
    return [c["url"] for c in kept], reads.of_sources()


def published(turn_id: str) -> list[str]:
    return [data["url"] for _id, name, data in turn_state(turn_id).read() if name == SOURCE_ADDED]


def seeded_by_the_first_step(turn_id: str) -> None:
    """Read the flags as the turn's first step does (it offers tools, and its records cite
    ``STEP_CITED``): ``turn.started`` published and the cited set seeded with them."""
    with get_watcher().watching(turn_id, Signal(), read=False):
        read_flags(turn_state(turn_id), events.started_event("reply"), {STEP_CITED})


def test_a_call_of_a_seeded_turn_cites_from_redis_alone(app, make_user, monkeypatch):
    """Issue 29: each call whose result cited read what the reply cites from the database (a
    tenth of the call's CPU), when the turn's cited set answered it already. The first step
    seeds the set in the round trip that reads the flags and publishes ``turn.started``."""
    with app.app_context():
        (_ctx, sources, _collected), _reads = context_of_a_call(app, make_user("ada").id)
        turn_id = sources.turn.id
        load_pipelined_scripts(get_redis())  # as the worker's watcher did when it started
        sends = Sends(monkeypatch)
        seeded_by_the_first_step(turn_id)
        [trip] = sends.with_event(events.TURN_STARTED)
        assert b"MGET" in trip and STEP_CITED.encode() in trip
        assert sends.with_event(STEP_CITED) == [trip]
        kept, reads = claimed(sources, [STEP_CITED, "https://b.example/"])
        assert (kept, reads) == ([STEP_CITED, "https://b.example/"], 0)
        assert published(turn_id) == ["https://b.example/"]


def test_a_first_step_seeds_the_cited_set_of_a_redis_that_forgot_the_scripts(app, make_user):
    """The seed rides in a pipeline by the script's SHA, which a restarted Redis does not know:
    the step then sends it alone, giving Redis the script."""
    with app.app_context():
        (_ctx, sources, _collected), _reads = context_of_a_call(app, make_user("ada").id)
        get_redis().script_flush()
        seeded_by_the_first_step(sources.turn.id)
        assert claimed(sources, [STEP_CITED]) == ([STEP_CITED], 0)
        assert published(sources.turn.id) == []


def test_a_call_reads_the_database_once_when_redis_lost_the_seeded_set(app, make_user):
    """A Redis restart loses the seeded set: the call reads what the reply cites, and what the
    step cited is not published again; a later call finds the set seeded again."""
    with app.app_context():
        (_ctx, sources, _collected), _reads = context_of_a_call(app, make_user("ada").id)
        state = turn_state(sources.turn.id)
        seeded_by_the_first_step(state.turn_id)
        state.client.delete(key(state.turn_id, "cited"))  # what a restart loses with it
        kept, reads = claimed(sources, [STEP_CITED, "https://b.example/"])
        assert (kept, reads) == ([STEP_CITED, "https://b.example/"], 1)
        turn = db.session.get(Turn, state.turn_id)
        later = ToolCall(turn_id=turn.id, call_id="c2", step=0, position=1, name="echo", input={})
        db.session.add(later)
        db.session.commit()
        _ctx, other, _collected = context_of_a_call_again(turn, later)
        kept, reads = claimed(other, [STEP_CITED, "https://b.example/", "https://c.example/"])
        assert reads == 0
        assert published(state.turn_id) == ["https://b.example/", "https://c.example/"]


def context_of_a_call_again(turn: Turn, call: ToolCall):
    """Return what ``make_tool_context`` returns for another call of the turn."""
    tool = Tool(name="echo", description="Echo.", input_schema=None, execute=lambda i, c: i)
    return make_tool_context(turn, call, Offered(tool, untrusted=False), Signal())


def test_a_seed_after_the_turn_ended_makes_no_set_and_its_calls_cite_nothing(app, make_user):
    """The reaper (or a Stop) ended the turn: a step run late seeds nothing, and a late call's
    claim is refused as before."""
    with app.app_context():
        (_ctx, sources, _collected), _reads = context_of_a_call(app, make_user("ada").id)
        state = turn_state(sources.turn.id)
        state.end(stream_ttl_seconds=600)
        seeded_by_the_first_step(state.turn_id)
        assert not state.exists("cited")
        assert claimed(sources, ["https://b.example/"]) == ([], 0)
        assert not state.exists("cited")


def test_a_url_the_model_cited_and_its_tools_cite_again_shows_once(chat, fake_model, model_ids):
    """The step's own citation (streamed) and its calls' (claimed against the set the step
    seeded) reach the page, the reply and the next model request once each."""
    page_a = "https://example.com/a"
    fake_model.script(
        Reply(
            content="Reading.",
            sources=((page_a, "A, as the model cites it"),),
            calls=(("page", '{"text": "a"}'), ("page", '{"text": "b"}')),
        ),
        Reply.tool_calls([("page", {"text": "a"})]),
        Reply.text("ok"),
    )
    started = chat.start(chat.new_conversation(), "read", model_ids[0])
    events = chat.events(started["turn"]["id"])
    added = [e.data["url"] for e in events if e.name == SOURCE_ADDED]
    assert added == [page_a, "https://example.com/b"]
    turn = chat.wait(started["turn"]["id"])
    assert turn["status"] == "completed", turn
    parts = chat.reply(turn)["parts"]
    assert [p["url"] for p in parts if p["type"] == "source"] == [page_a, "https://example.com/b"]
    # Each result introduces the sources it cites by their one number in the reply.
    sent = " ".join(str(m["content"]) for m in fake_model.chat_requests()[-1].json["messages"])
    numbered = set(re.findall(r"Source \[(\d+)\]: [^\n]*, (https://\S+)", sent))
    assert numbered == {("1", page_a), ("2", "https://example.com/b")}

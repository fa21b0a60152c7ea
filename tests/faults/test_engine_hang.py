"""A search engine that accepts the connection and never answers (a loopback stub standing in
for the admin's SearXNG): a Stop ends the search at once, an unstopped search ends at the
engine's time limit with a sentence the model reads, and the worker answers other turns
meanwhile."""

from __future__ import annotations

import threading

import pytest

from core.plugin_host import save_options
from tests.faults.conftest import Follower, Stopwatch, record_recovery
from tests.support.fake_model import Reply
from tests.support.processes import joined
from tests.support.sites import Site

# The shared stack's user is no admin, and reads what happened all the same (issue 24): a
# time-out is nothing only an administrator can fix.
HUNG = "SearXNG did not answer within 15 seconds. Try again later."
SEARCH = {"tools": ["web_search"]}


@pytest.fixture
def hung_engine():
    released = threading.Event()
    with Site() as site:
        site.route("/search", lambda request: released.wait(60))
        yield site
        released.set()


@pytest.mark.slow
def test_a_hung_engine_ends_at_its_time_limit_or_at_a_stop_and_blocks_no_other_turn(
    hung_engine, shared_stack
):
    stack = shared_stack
    with stack.app.app_context():  # as an admin's save does: every process rebuilds its host
        save_options("web_search", {"engine": "searxng", "baseURL": hung_engine.url("/")})
    search = Reply.tool_calls([("web_search", {"query": "news"})])
    stack.fake.script(search, search)
    waited, stopped = (stack.chat.new_conversation() for _ in range(2))
    waiting = stack.chat.start(waited, "search", "fake/m", generation=SEARCH)["turn"]["id"]
    stopping = stack.chat.start(stopped, "search", "fake/m", generation=SEARCH)["turn"]["id"]
    pages = {turn: Follower(stack.chat, turn) for turn in (waiting, stopping)}
    for page in pages.values():
        page.start()
    for page in pages.values():
        page.wait_for_event("tool.started")
    searched = Stopwatch()
    stack.fake.script(Reply.text("Meanwhile, hello."))
    other = stack.chat.run(stack.chat.new_conversation(), "hi", "fake/m")
    assert other["status"] == "completed"
    assert searched.seconds() < 10  # answered while both searches hang

    clock = Stopwatch()
    assert stack.chat.call("POST", f"/api/turns/{stopping}/cancel").status_code == 200
    joined(pages[stopping], "the stopped turn's event stream")
    record_recovery("search engine hung: Stop to the turn's end event", clock.seconds())
    stopped_reply = stack.chat.reply(stack.chat.turn(stopping))
    assert stopped_reply["status"] == "cancelled"
    assert [p["type"] for p in stopped_reply["parts"]] == ["tool-call", "tool-result"]
    assert stopped_reply["parts"][1]["outcome"] == "cancelled"

    stack.fake.script(Reply.text("The search engine did not answer; try again later."))
    turn = stack.chat.wait(waiting, timeout=30)
    record_recovery("search engine hung: search started to turn answered", searched.seconds())
    assert turn["status"] == "completed", turn
    parts = stack.chat.reply(turn)["parts"]
    assert [p["type"] for p in parts] == ["tool-call", "tool-result", "text"]
    assert (parts[1]["outcome"], parts[1]["error"]) == ("error", HUNG)
    finished = next(e for e in pages[waiting].events if e.name == "tool.finished")
    assert finished.data["error"] == HUNG

"""An ended reply's [n] markers are checked against what the turn read of source n."""

from __future__ import annotations

from core.extensions import db
from core.models import ToolCall
from core.turn.calls import claim_call, finish_call, store_calls
from core.turn.checks import output_text
from core.turn.lifecycle import claim_step, finish_turn
from core.turn.replies import StepOutput, reply_parts
from tests.support.turns import stored_turn
from workers.providers import ToolCallRequest

FOUND = "https://found.example/"
READ = "https://read.example/"
PAGE = (
    "The bridge opened in 1932. It is 1,149 metres long and carries eight lanes. "
    "Its arch was designed by John Bradfield."
)


def run_step(turn_id: str, user_id: str, step: int, calls: list[tuple[str, object, list]]):
    """Store a step asking for ``calls`` (id, output, citations) and finish each of them."""
    requested = [
        ToolCallRequest(id=call_id, name="echo", arguments={}, raw_arguments="{}")
        for call_id, _output, _cited in calls
    ]
    store_calls(turn_id, step, user_id, StepOutput(""), {}, requested)
    db.session.commit()
    for call_id, output, cited in calls:
        assert claim_call(turn_id, call_id, f"task-{call_id}") == "claimed"
        call = db.session.get(ToolCall, (turn_id, call_id))
        call.citations = cited
        finish_call(call, "ok", output, None, [], user_id, "echo")
    assert claim_step(turn_id, step + 1)[0] == "claimed"


def test_a_source_found_is_checked_against_its_snippet_and_one_read_against_the_page(
    app, make_user
):
    user = make_user("ada")
    turn_id = stored_turn(app, user.id, "running", with_reply=True)
    answer = (
        "The bridge opened in 1932 [2]. It is 2,000 metres long [2]. "
        "The bridge opened in 1932 [1]. Made up [5]."
    )
    with app.app_context():
        search = {"results": [{"url": READ}, {"url": FOUND}]}
        run_step(
            turn_id,
            user.id,
            0,
            [
                (
                    "search",
                    search,
                    [
                        {"url": FOUND, "title": "Found", "snippet": "The bridge opened in 1932."},
                        {"url": READ, "title": "Read", "snippet": "A bridge."},
                    ],
                )
            ],
        )
        run_step(turn_id, user.id, 1, [("fetch", {"url": READ, "content": PAGE}, [{"url": READ}])])
        assert not any("citations" in p for p in reply_parts(turn_id))  # not while it runs
        assert finish_turn(turn_id, "completed", output=StepOutput(answer))
        parts = reply_parts(turn_id)
    [text] = [p for p in parts if p["type"] == "text"]
    checks = [(c["number"], c["url"], c["status"]) for c in text["citations"]]
    assert checks == [
        (2, READ, "supported"),
        (2, READ, "partly"),
        (1, FOUND, "snippet_only"),
        (5, None, "no_such_source"),
    ]
    read, wrong, snippet, _invented = text["citations"]
    assert PAGE[read["passage"]["start"] : read["passage"]["end"]] == read["passage"]["text"]
    assert "2,000" in wrong["missing"]
    assert snippet["passage"]["text"] == "The bridge opened in 1932."
    fetched = [p for p in parts if p.get("callId") == "fetch"]
    assert fetched[0]["sources"] == [2]  # READ: the search cited it second
    assert [(p["number"], p["url"]) for p in parts if p["type"] == "source"] == [
        (1, FOUND),
        (2, READ),
    ]


def test_what_a_call_read_is_its_text_its_pages_content_or_its_json():
    assert output_text("plain") == "plain"
    assert output_text({"content": "the page", "url": "x"}) == "the page"
    assert output_text({"results": [1]}) == '{"results": [1]}'

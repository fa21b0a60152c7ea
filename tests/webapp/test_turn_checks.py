"""An ended reply's [n] markers are checked against what the turn read of source n."""

from __future__ import annotations

import sqlite3

from core.extensions import db
from core.models import ToolCall
from core.turn import checks
from core.turn.calls import claim_call, finish_call, store_calls
from core.turn.checks import output_text
from core.turn.lifecycle import claim_step, finish_turn
from core.turn.parts import text_part
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
        finish_call(call, "ok", output, None, [], user_id, "echo", cited)
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


def sqlite_path(app) -> str:
    """The file of the app's SQLite database."""
    return app.config["DATABASE_URL"].removeprefix("sqlite:///")


def counted_checks(monkeypatch, app) -> list[str]:
    """Count each text checked; each check first takes SQLite's write lock from a connection of
    its own, without waiting, which fails while any write transaction is open."""
    checked: list[str] = []
    real = checks.check_answer

    def check_answer(answer, sources):
        other = sqlite3.connect(sqlite_path(app), timeout=0)
        try:
            other.execute("BEGIN IMMEDIATE")  # raises "database is locked" during a write
            other.rollback()
        finally:
            other.close()
        checked.append(answer)
        return real(answer, sources)

    monkeypatch.setattr(checks, "check_answer", check_answer)
    return checked


def test_an_ending_checks_its_citations_once_and_outside_its_write(app, make_user, monkeypatch):
    """Regression (issue 27): the ending checked citations inside its write transaction (the
    turn's UPDATE had taken SQLite's write lock), and a reply derived twice checked twice."""
    user = make_user("ada")
    turn_id = stored_turn(app, user.id, "running", with_reply=True)
    answer = "The bridge opened in 1932 [1]. It is 2,000 metres long [1]."
    checked = counted_checks(monkeypatch, app)
    with app.app_context():
        run_step(turn_id, user.id, 0, [("fetch", {"url": READ, "content": PAGE}, [{"url": READ}])])
        db.session.commit()  # the claim of step 1, as the step commits it
        assert finish_turn(turn_id, "completed", output=StepOutput(answer))
        [text] = [p for p in reply_parts(turn_id) if p["type"] == "text"]
    assert checked == [answer]  # reply_parts derived it again: the same text and page
    assert [c["status"] for c in text["citations"]] == ["supported", "partly"]


def test_a_stop_checks_once_though_its_write_reads_the_records_again(app, make_user, monkeypatch):
    user = make_user("ada")
    turn_id = stored_turn(app, user.id, "running", with_reply=True)
    said = "The bridge opened in 1932 [1]. Let me read more [1]."
    checked = counted_checks(monkeypatch, app)
    with app.app_context():
        requested = [ToolCallRequest(id="fetch", name="echo", arguments={}, raw_arguments="{}")]
        store_calls(turn_id, 0, user.id, StepOutput(said), {}, requested)
        db.session.commit()
        assert claim_call(turn_id, "fetch", "task-fetch") == "claimed"
        call = db.session.get(ToolCall, (turn_id, "fetch"))
        page = {"url": READ, "content": PAGE}
        finish_call(call, "ok", page, None, [], user.id, "echo", [{"url": READ}])
        assert finish_turn(turn_id, "cancelled")
        [text] = [p for p in reply_parts(turn_id) if p["type"] == "text"]
    assert checked == [said]
    assert [c["status"] for c in text["citations"]] == ["supported", "not_found"]


def test_a_reply_derived_again_checks_only_the_text_whose_sources_changed(monkeypatch):
    checked: list[str] = []
    real = checks.check_answer
    monkeypatch.setattr(checks, "check_answer", lambda a, s: checked.append(a) or real(a, s))
    first, second = "The bridge opened in 1932 [1].", "It is 1,149 metres long [2]."
    parts = [text_part(first), text_part(second)]
    numbers = {READ: 1, FOUND: 2}

    def calls(found_text: str) -> list[ToolCall]:
        return [
            ToolCall(outcome="ok", output=PAGE, citations=[{"url": READ}]),
            ToolCall(outcome="ok", output=found_text, citations=[{"url": FOUND}]),
        ]

    checks.checked_parts(parts, calls("A bridge."), numbers)
    checks.checked_parts(parts, calls("A bridge."), numbers)
    assert checked == [first, second]
    again = checks.checked_parts(parts, calls("A bridge 1,149 metres long."), numbers)
    assert checked == [first, second, second]
    assert again[1]["citations"][0]["status"] == "supported"

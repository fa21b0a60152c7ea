"""Turns do not hold a database connection while they wait on a model or a tool.

The worker here keeps two connections (DATABASE_POOL_SIZE=1, as many again under load) and
runs eight threads: turns that held a connection while streaming would run two at a time.
"""

from __future__ import annotations

import threading

import pytest

from tests.support.fake_model import Reply
from tests.workers.conftest import make_chat_app
from webapp.extensions import db
from webapp.models import ToolCall, Turn

TURNS = 5


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory, redis_url, sqlite_template):
    """The module's chat app, with the smallest connection pool (and room for one user's
    TURNS answers at once)."""
    app = make_chat_app(
        tmp_path_factory, redis_url, sqlite_template, DATABASE_POOL_SIZE=1, QUOTA_OPEN_TURNS=TURNS
    )
    yield app
    with app.app_context():
        db.engine.dispose()


def run_together(chat, model: str, **extra) -> list[dict]:
    """Start TURNS turns at once, each in its own conversation; return them once ended."""
    conversations = [chat.new_conversation() for _ in range(TURNS)]
    started: list[dict] = []
    threads = [
        threading.Thread(target=lambda c=c: started.append(chat.start(c, "hi", model, **extra)))
        for c in conversations
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(started) == TURNS
    return [chat.wait(s["turn"]["id"], timeout=60) for s in started]


def overlap(spans: list[tuple]) -> bool:
    """Whether every span was running at one same moment."""
    return max(start for start, _ in spans) < min(end for _, end in spans)


def test_more_turns_stream_at_once_than_the_worker_has_connections(
    chat, chat_app, fake_model, model_ids
):
    fake_model.responder = lambda request: Reply.text("one two three four", chunks=4, delay=0.4)
    turns = run_together(chat, model_ids[0], generation={"tools": []})
    assert [t["status"] for t in turns] == ["completed"] * TURNS
    with chat_app.app_context():
        rows = db.session.scalars(db.select(Turn).where(Turn.id.in_([t["id"] for t in turns])))
        assert overlap([(row.started_at, row.finished_at) for row in rows])


def test_more_tool_calls_run_at_once_than_the_worker_has_connections(
    chat, chat_app, fake_model, model_ids
):
    def respond(request: dict) -> Reply:
        if any(m["role"] == "tool" for m in request["messages"]):
            return Reply.text("Done.")
        return Reply.tool_calls([("slow", {})])

    fake_model.responder = respond
    turns = run_together(chat, model_ids[0], generation={"tools": ["slow"]})
    assert [t["status"] for t in turns] == ["completed"] * TURNS
    with chat_app.app_context():
        ids = [t["id"] for t in turns]
        calls = db.session.scalars(db.select(ToolCall).where(ToolCall.turn_id.in_(ids))).all()
        assert [c.outcome for c in calls] == ["timeout"] * TURNS
        assert overlap([(c.started_at, c.finished_at) for c in calls])

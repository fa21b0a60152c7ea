"""Turns do not hold a database connection while they wait on a model or a tool.

The worker here keeps two connections (DATABASE_POOL_SIZE=1, as many again under load) and
runs eight threads: turns that held a connection while streaming would run two at a time.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from core.extensions import db
from core.models import ToolCall, Turn
from tests.support.fake_model import Reply
from tests.support.processes import joined
from tests.workers.conftest import make_chat_app

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
        joined(thread, "a starting thread")
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


class Meeting(ThreadingHTTPServer):
    """A loopback server that holds each request until ``expected`` are in flight at once,
    then answers them all "met"; ``most`` is the most it held at once (a request that waited
    45 s in vain, which only a hang would make it, is answered "alone")."""

    daemon_threads = True

    def __init__(self, expected: int) -> None:
        super().__init__(("127.0.0.1", 0), _MeetingHandler)
        self.expected = expected
        self.in_flight = 0
        self.most = 0
        self.changed = threading.Condition()
        self.url = f"http://127.0.0.1:{self.server_address[1]}/meet"

    def meet(self) -> str:
        with self.changed:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self.changed.notify_all()
            met = self.changed.wait_for(lambda: self.most >= self.expected, timeout=45)
            self.in_flight -= 1
        return "met" if met else "alone"


class _MeetingHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = self.server.meet().encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_more_tool_calls_run_at_once_than_the_worker_has_connections(
    chat, chat_app, fake_model, model_ids
):
    """Regression: this asserted overlap by the calls' stored times, which a busy machine
    could make miss; now the calls meet at a loopback server that counts them in flight."""
    meeting = Meeting(TURNS)
    threading.Thread(target=meeting.serve_forever, daemon=True).start()

    def respond(request: dict) -> Reply:
        if any(m["role"] == "tool" for m in request["messages"]):
            return Reply.text("Done.")
        return Reply.tool_calls([("gather", {"text": meeting.url})])

    fake_model.responder = respond
    try:
        turns = run_together(chat, model_ids[0], generation={"tools": ["gather"]})
    finally:
        meeting.shutdown()
        meeting.server_close()
    assert [t["status"] for t in turns] == ["completed"] * TURNS
    assert meeting.most == TURNS
    with chat_app.app_context():
        ids = [t["id"] for t in turns]
        calls = db.session.scalars(db.select(ToolCall).where(ToolCall.turn_id.in_(ids))).all()
        assert [(c.outcome, c.output) for c in calls] == [("ok", "met")] * TURNS

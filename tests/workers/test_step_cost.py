"""What a text turn's one step costs the database, run as a worker runs it (in this process):
its statements and its transactions (issue 29), beside what the model is sent and what the
user reads afterwards, which the step's cost must not change."""

from __future__ import annotations

import re
import threading

import pytest
import redis.connection
from sqlalchemy import event

from core.extensions import db
from core.models import Conversation, Message, Provider, Turn, User
from core.turn import events, queued
from core.turn.lifecycle import store_turn
from core.turn.parts import kind_of, text_part
from core.turn.state import key, turn_state
from tests.support.fake_model import FakeModel, Reply
from tests.support.fetched_turns import store_fetched_call
from tools.mcp.source import AnyInput, MCPTool
from workers.offer import Offered
from workers.steps import spec_of


@pytest.fixture
def step_app(make_app, monkeypatch):
    """An app whose tasks run in this process, as a worker's do, and its fake model. The
    provider clients its steps make are closed after: the process's cache of them
    (``workers.runtime``) kept each one's pooled connection to the stopped fake model open
    until the test process exited."""
    from workers import celery_app, runtime

    clients: dict = {}
    monkeypatch.setattr(runtime, "_providers", clients)
    with FakeModel(Reply.text("The bridge opened in 1932.")) as fake:
        app = make_app(LOOKOUT_PLUGINS="")
        monkeypatch.setattr(celery_app, "_flask_app", app)
        with app.app_context():
            db.session.add(Provider(name="fake", base_url=fake.base_url, models=[{"name": "m"}]))
            db.session.commit()
        try:
            yield app, fake
        finally:
            for client in clients.values():
                client.close()


def queued_turn(app, name: str, earlier: list[tuple[str, str]]) -> str:
    """Store a conversation of user ``name`` of ``earlier`` (role, text) messages and a queued
    turn asking "When?" after them, as the web stores it; return the turn's id."""
    with app.app_context():
        user = User.make(name, "password")
        db.session.add(user)
        db.session.flush()
        conversation = Conversation(owner_id=user.id, title="Bridges")
        db.session.add(conversation)
        db.session.flush()
        parent = None
        for role, text in earlier:
            message = Message(
                conversation_id=conversation.id, parent_id=parent, role=role,
                parts=[text_part(text)], status="completed",
            )  # fmt: skip
            db.session.add(message)
            db.session.flush()
            parent = message.id
        asked = Message(
            conversation_id=conversation.id, parent_id=parent, role="user",
            parts=[text_part("When?")], status="completed",
        )  # fmt: skip
        turn = store_turn(conversation, asked, "fake/m", {"tools": []}, [])
        queued.mark_queued(turn.id, queued.step_work(0), "task-0")
        return turn.id


def run_step(app, turn_id: str, step: int = 0) -> tuple[list[str], int]:
    """Run the turn's step ``step`` as the worker does; return the statements it sent (``VERB
    table``) and how many transactions it committed."""
    from workers.steps import run_turn_step

    sent: list[str] = []
    commits: list[int] = []

    def statement(_conn, _cursor, text, *_args) -> None:
        table = re.search(r"\b(?:FROM|INTO|UPDATE)\s+\"?(\w+)", text, re.IGNORECASE)
        sent.append(f"{text.split(None, 1)[0].upper()} {table.group(1) if table else '?'}")

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", lambda _conn: commits.append(1))
    try:
        run_turn_step.apply(args=(turn_id, step))
    finally:
        event.remove(engine, "before_cursor_execute", statement)
    return sent, len(commits)


def test_a_text_turns_step_sends_seven_statements_in_two_transactions(step_app):
    """Issue 29: the first claim made its reply in three statements (the message, then the
    turn's link to it), and the step committed its reads apart from its claim."""
    app, fake = step_app
    run_step(app, queued_turn(app, "bo", []))  # the process loads what it keeps: models, plugins
    turn_id = queued_turn(
        app, "ada", [("user", "Which bridge?"), ("assistant", "The Harbour Bridge.")]
    )
    sent, commits = run_step(app, turn_id)
    assert sent == [
        "INSERT messages",  # the reply, from the queued turn's row
        "UPDATE turns",  # the claim, taking the reply and returning the turn and its owner
        "SELECT messages",  # the history, read with the claim
        "UPDATE turns",  # the ending, returning what the rest needs
        "INSERT usage_counts",
        "INSERT turn_steps",
        "UPDATE messages",
    ]
    assert commits == 2
    # What the model was sent and what the user reads are the step's as before.
    assert [(m["role"], m["content"]) for m in fake.last_request().json["messages"][1:]] == [
        ("user", "Which bridge?"),
        ("assistant", "The Harbour Bridge."),
        ("user", "When?"),
    ]
    with app.app_context():
        turn = db.session.get(Turn, turn_id)
        reply = db.session.get(Message, turn.assistant_message_id)
        assert (turn.status, turn.error) == ("completed", None)
        assert reply.status == "completed"
        assert reply.parent_id == turn.user_message_id
        assert reply.parts[0]["text"] == "The bridge opened in 1932."


def redis_trips(monkeypatch, run) -> list[list[bytes]]:
    """Call ``run()``; return the names of the Redis commands this thread sent (not the
    watcher's), one list a round trip, those reading the kept versions marked ``VERSIONS``."""
    task_thread = threading.get_ident()
    sent: list[bytes] = []
    send = redis.connection.AbstractConnection.send_packed_command

    def spy(self, command, *args, **kwargs):
        if threading.get_ident() == task_thread:
            sent.append(b"".join(command) if isinstance(command, list) else command)
        return send(self, command, *args, **kwargs)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", spy)
    try:
        run()
    finally:
        monkeypatch.undo()
    named = re.compile(rb"(?<=\r\n)\*\d+\r\n\$\d+\r\n([A-Z]+)\r\n")  # each command's name
    return [
        named.findall(b"\r\n" + trip) + ([b"VERSIONS"] if b":version\r\n" in trip else [])
        for trip in sent
    ]


def test_a_text_turns_step_reads_the_kept_versions_as_it_clears_its_queued_marker(
    step_app, monkeypatch
):
    """Issue 29: a step cleared its queued marker in one round trip and read the versions of
    what the process keeps (models, plugins, limits) in another, at its first look: six round
    trips to Redis from the task's thread, now five (six when the stream's thread publishes
    text the watcher was late for). The marker is cleared all the same."""
    app, _fake = step_app
    run_step(app, queued_turn(app, "bo", []))  # the process loads what it keeps
    turn_id = queued_turn(app, "ada", [])
    trips = redis_trips(monkeypatch, lambda: run_step(app, turn_id))
    assert trips[0] == [b"SREM", b"MGET", b"VERSIONS"]  # the marker cleared, the versions read
    assert sum(b"VERSIONS" in trip for trip in trips) == 1
    with app.app_context():
        assert not queued.all_queued(turn_id, [queued.step_work(0)])
        assert db.session.get(Turn, turn_id).status == "completed"


def test_a_text_turns_step_reads_the_cancel_flags_in_the_round_trip_of_turn_started(
    step_app, monkeypatch
):
    """Issue 29: a step read the watched turns' cancel flags as it registered with the
    watcher, then published ``turn.started`` in a round trip of its own: five round trips from
    the task's thread, now four (five when the stream's thread publishes text the watcher was
    late for). The turn starts, streams and completes all the same."""
    app, _fake = step_app
    run_step(app, queued_turn(app, "bo", []))  # the process loads what it keeps
    turn_id = queued_turn(app, "ada", [])
    trips = redis_trips(monkeypatch, lambda: run_step(app, turn_id))
    assert trips[1] == [b"MGET", b"EVALSHA"]  # the flags read, turn.started published
    assert sum(b"MGET" in trip for trip in trips) == 2  # the versions' and the flags'
    assert len(trips) <= 5
    with app.app_context():
        names = [name for _, name, _ in turn_state(turn_id).read()]
        assert names[0] == events.TURN_STARTED and names[-1] == events.TURN_COMPLETED
        assert db.session.get(Turn, turn_id).status == "completed"


def test_a_step_announces_its_turn_to_a_redis_that_forgot_the_scripts(step_app):
    """``turn.started`` rides in a pipeline by the publish script's SHA, which a restarted
    Redis does not know: the step then publishes it alone, giving Redis the script."""
    app, _fake = step_app
    run_step(app, queued_turn(app, "bo", []))
    turn_id = queued_turn(app, "ada", [])
    with app.app_context():
        turn_state(turn_id).client.script_flush()
    run_step(app, turn_id)
    with app.app_context():
        names = [name for _, name, _ in turn_state(turn_id).read()]
        assert names[0] == events.TURN_STARTED and names[-1] == events.TURN_COMPLETED
        assert names.count(events.TURN_STARTED) == 1


def test_a_cancel_before_the_steps_read_stops_its_stream(step_app):
    """The step registers its turn with the watcher unread and reads the flag just before the
    model is called: a Stop that came before then is seen there, and the model is not asked."""
    app, fake = step_app
    turn_id = queued_turn(app, "ada", [])
    with app.app_context():
        turn_state(turn_id).client.set(key(turn_id, "cancel"), "1")
    run_step(app, turn_id)
    with app.app_context():
        names = [name for _, name, _ in turn_state(turn_id).read()]
        assert names[-1] == events.TURN_CANCELLED
        assert db.session.get(Turn, turn_id).status == "cancelled"
    assert fake.chat_requests() == []


def fetched_turn(app, name: str) -> str:
    """Store a turn whose first step asked for a page and whose call read it (its result and
    the source it cites stored), queued for its second step as the call's task leaves it."""
    turn_id = queued_turn(app, name, [])
    page = {"url": "https://bridges.test/", "content": "Opened on 19 March 1932."}
    with app.app_context():
        store_fetched_call(turn_id, page, "Bridges")
    return turn_id


def test_a_step_after_a_tool_call_sends_ten_statements_in_two_transactions(step_app):
    """Issue 29: a later step wrote its reply in a transaction of its own, after its claim's,
    and its ending read each call again (the commit before the model call had expired the
    calls the step read)."""
    app, fake = step_app
    run_step(app, fetched_turn(app, "bo"), 1)  # the process loads what it keeps
    turn_id = fetched_turn(app, "ada")
    sent, commits = run_step(app, turn_id, 1)
    assert sent == [
        "UPDATE turns",  # the claim
        "SELECT messages",  # the history
        "SELECT turns",  # the records: the turns that wrote the reply, their steps, calls
        "SELECT turn_steps",
        "SELECT tool_calls",
        "UPDATE messages",  # the reply with the call's result, as the model is sent it
        "UPDATE turns",  # the ending
        "INSERT usage_counts",
        "INSERT turn_steps",
        "UPDATE messages",
    ]
    assert commits == 2
    sent_messages = fake.last_request().json["messages"]
    assert "Opened on 19 March 1932." in str(sent_messages)
    with app.app_context():
        turn = db.session.get(Turn, turn_id)
        reply = db.session.get(Message, turn.assistant_message_id)
        assert (turn.status, turn.error) == ("completed", None)
        assert [kind_of(p) for p in reply.parts] == ["tool-call", "tool-result", "source", "text"]
        assert reply.parts[1]["output"]["content"] == "Opened on 19 March 1932."
        assert reply.parts[1]["sources"] == [1]
        assert reply.parts[-1]["text"] == "The bridge opened in 1932."


def test_a_tool_is_offered_with_its_own_json_schema():
    """An MCP server's tool goes to the model with the schema its server listed, not the one
    derived from its permissive input schema; a plugin's with the one its input derives."""
    server_schema = {"type": "object", "properties": {"tz": {"type": "string"}}}
    listed = MCPTool(
        name="time_now", description="The time.", input_schema=AnyInput,
        execute=lambda input, ctx: None,
    )  # fmt: skip
    listed.server_schema = server_schema
    assert spec_of(Offered(listed, True, source="mcp:time")).parameters == server_schema


def test_a_tool_calls_task_reads_the_kept_versions_as_it_clears_its_queued_marker(
    step_app, monkeypatch
):
    """Issue 29: a tool call's task, as a step's, reads the versions of what the process keeps
    in the round trip that clears its queued marker, not in one of its own; the delivery of
    a call that has its outcome runs the step after it, which reads them again."""
    from workers.toolcalls import run_tool_call

    app, fake = step_app
    run_step(app, fetched_turn(app, "bo"), 1)  # the process loads what it keeps
    turn_id = fetched_turn(app, "ada")
    with app.app_context():
        queued.mark_queued(turn_id, queued.call_work("call_1"), "task-call")

    def run() -> None:
        run_tool_call.apply(args=(turn_id, "call_1"))

    trips = redis_trips(monkeypatch, run)
    assert trips[0] == [b"SREM", b"MGET", b"VERSIONS"]  # the call's marker cleared, versions read
    assert sum(b"VERSIONS" in trip for trip in trips) == 2  # and the next step's, at its start
    with app.app_context():
        assert not queued.all_queued(turn_id, [queued.call_work("call_1")])
        turn = db.session.get(Turn, turn_id)
        assert (turn.status, turn.error) == ("completed", None)
    assert "Opened on 19 March 1932." in str(fake.last_request().json["messages"])

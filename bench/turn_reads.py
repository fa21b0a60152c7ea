"""The reads of ``turns`` a model step and a POST make, at a table of many turns: each read's
plan and its time in process.

Run from the project root: ``.venv/bin/python -m bench.turn_reads [--turns 20000] [--users
500] [--open 2000] [--calls 2000] [--database-url URL]`` (default: SQLite in a temporary
folder; a PostgreSQL URL names an empty scratch database, migrated here).

The table is filled with ``--users`` users, four conversations each, their turns spread
evenly, one in five a continuation of the turn before it (the same reply), the last
``--open`` of them open, each with one step and every other one with a tool call. Then each
read is explained (SQLite ``EXPLAIN QUERY PLAN``, PostgreSQL ``EXPLAIN (ANALYZE, BUFFERS)``)
as the app runs it, and run ``--calls`` times: ``read_records`` (every model step),
``cited_urls`` both ways and ``earlier_turn_ids`` (an ending, a tool call) on turns chosen
at random, continuations among them, and the POST's open-turns count for users at random.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from sqlalchemy import event, insert

from bench.harness import machine, table
from core import turn_starts
from core.extensions import db
from core.models import Conversation, Message, ToolCall, Turn, TurnStep, User
from core.turn import replies
from tests.support import databases
from tests.support.redis_server import RedisServer
from webapp import create_app

CONVERSATIONS_PER_USER = 4
CONTINUED_EVERY = 5


def new_id() -> str:
    return uuid.uuid4().hex


def fill(users: int, turns: int, open_turns: int) -> tuple[list[str], list[str], list[str]]:
    """Store the users, conversations, messages, turns, steps and calls; return the users',
    the turns' and the continuations' ids."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    user_rows = [
        {"id": new_id(), "name": f"reads-{n}", "password_hash": "x", "roles": ["user"]}
        for n in range(users)
    ]
    conversations = [
        {"id": new_id(), "owner_id": user["id"], "title": ""}
        for user in user_rows
        for _ in range(CONVERSATIONS_PER_USER)
    ]
    messages, turn_rows, steps, calls, continued = [], [], [], [], []
    replies_by_conversation: dict[str, str] = {}
    for number in range(turns):
        conversation = conversations[number % len(conversations)]["id"]
        created = start + timedelta(seconds=number)
        turn_id = new_id()
        asked = {"id": new_id(), "conversation_id": conversation, "role": "user"}
        messages.append({**asked, "parts": [text_part("Hello")], "created_at": created})
        # The conversation's turn count, each conversation's turns in turn.
        if (number // len(conversations)) % CONTINUED_EVERY == CONTINUED_EVERY - 1:
            assistant = replies_by_conversation[conversation]
            continued.append(turn_id)
        else:
            assistant = new_id()
            messages.append(
                {
                    "id": assistant,
                    "conversation_id": conversation,
                    "parent_id": asked["id"],
                    "role": "assistant",
                    "parts": [],
                    "created_at": created,
                }
            )
        replies_by_conversation[conversation] = assistant
        turn_rows.append(
            {
                "id": turn_id,
                "conversation_id": conversation,
                "user_message_id": asked["id"],
                "assistant_message_id": assistant,
                "status": "running" if number >= turns - open_turns else "completed",
                "model": "bench/m",
                "generation": {},
                "roles": ["user"],
                "step": 0,
                "created_at": created,
            }
        )
        source = {"url": f"https://example.com/{number}", "title": "Page"}
        steps.append({"turn_id": turn_id, "step": 0, "text": "Said.", "sources": [source]})
        if number % 2:
            calls.append(
                {
                    "turn_id": turn_id,
                    "call_id": "call-0",
                    "step": 0,
                    "position": 0,
                    "name": "web_search",
                    "input": {"query": "q"},
                    "outcome": "ok",
                    "citations": [source],
                }
            )
    for model, rows in (
        (User, user_rows),
        (Conversation, conversations),
        (Message, messages),
        (Turn, turn_rows),
        (TurnStep, steps),
        (ToolCall, calls),
    ):
        for at in range(0, len(rows), 5_000):
            db.session.execute(insert(model), rows[at : at + 5_000])
    db.session.commit()
    return [u["id"] for u in user_rows], [t["id"] for t in turn_rows], continued


def text_part(text: str) -> dict:
    return {"type": "text", "text": text}


@contextmanager
def statements_run() -> list:
    """Within, keep each statement the app sends and its parameters."""
    seen: list = []

    def keep(conn, cursor, statement, parameters, context, executemany):
        seen.append((statement, parameters))

    engine = db.engine
    event.listen(engine, "before_cursor_execute", keep)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", keep)


def explain(read: Callable[[], object]) -> list[str]:
    """Return the plan of each statement ``read`` sends, as the database explains it."""
    with statements_run() as seen:
        read()
    db.session.rollback()
    connection = db.session.connection()
    postgres = connection.dialect.name == "postgresql"
    prefix = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " if postgres else "EXPLAIN QUERY PLAN "
    plans = []
    for statement, parameters in seen:
        rows = connection.exec_driver_sql(prefix + statement, parameters).all()
        plans.append("\n".join(str(row[0] if postgres else row[-1]) for row in rows))
    db.session.rollback()
    return plans


def per_call(read: Callable[[object], object], arguments: list) -> tuple[float, float, str]:
    """Return the process-CPU and wall milliseconds per call of ``read`` over ``arguments``,
    and (PostgreSQL on this machine) its server process's CPU milliseconds per call."""
    server = server_process()
    server_cpu = cpu_ticks(server)
    cpu, wall = time.process_time(), time.perf_counter()
    for argument in arguments:
        read(argument)
        db.session.rollback()
    count = len(arguments)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    served = ""
    if server is not None and server_process() == server:
        ticks = cpu_ticks(server) - server_cpu
        served = f"{ticks * 1000 / os.sysconf('SC_CLK_TCK') / count:.3f}"
    return cpu * 1000 / count, wall * 1000 / count, served


def server_process() -> int | None:
    """Return the id of the PostgreSQL process serving the session, None for SQLite or a
    server on another machine."""
    if db.engine.dialect.name != "postgresql":
        return None
    pid = db.session.scalar(db.text("SELECT pg_backend_pid()"))
    db.session.rollback()
    return pid if os.path.exists(f"/proc/{pid}/stat") else None


def cpu_ticks(pid: int | None) -> int:
    """Return the process's CPU time (user and system) in clock ticks."""
    if pid is None:
        return 0
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def main() -> None:
    """Print each read's plan and a table of its milliseconds per call."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--open", type=int, default=2_000)
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--database-url")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    print(machine())
    url = args.database_url
    if url is None:
        url = f"sqlite:///{tempfile.mkdtemp(prefix='lookout-bench-reads-')}/lookout.db"
    # Nothing here reaches Redis: the address is one nothing answers.
    with RedisServer() as redis_server:
        app = create_app(
            {"SECRET_KEY": "bench", "DATABASE_URL": url, "REDIS_URL": redis_server.url}
        )
        databases.migrate(app)
        rows = measure(app, args)
    print()
    print(f"{args.turns} turns, {args.users} users, {args.open} open, {url.split(':')[0]}")
    header = ["read", "CPU ms a call", "wall ms a call", "server CPU ms a call"]
    print(table(header, rows))


def measure(app, args) -> list[list[str]]:
    """Fill the table; print each read's plan; return each read's milliseconds per call."""
    chosen = random.Random(args.seed)
    with app.app_context():
        users, turns, continued = fill(args.users, args.turns, args.open)
        if db.engine.dialect.name == "postgresql":
            # The statistics autovacuum keeps in use; SQLite keeps none unless told (Lookout
            # never tells it), so its planner is left to guess as in use.
            db.session.execute(db.text("ANALYZE"))
            db.session.commit()
        sample = [chosen.choice(continued if n % 2 else turns) for n in range(args.calls)]
        posts = [
            {"user": chosen.choice(users), "conversation": new_id()} for _ in range(args.calls)
        ]

        def known(turn_id: str) -> Turn:
            return db.session.get(Turn, turn_id)

        def open_count(values: dict) -> object:
            return db.session.execute(turn_starts._open_turns(), values).one()

        reads = {
            "read_records": (replies.read_records, sample),
            "cited_urls (by id)": (replies.cited_urls, sample),
            "cited_urls (known)": (
                lambda t: replies.cited_urls(t, known(t)),
                sample,
            ),
            "earlier_turn_ids": (replies.earlier_turn_ids, sample),
            "open-turns count (POST)": (open_count, posts),
        }
        for name, (read, arguments) in reads.items():
            print(f"\n--- {name}")
            for plan in explain(lambda read=read, a=arguments: read(a[1])):
                print(plan)
        rows = []
        for name, (read, arguments) in reads.items():
            read(arguments[0])
            cpu, wall, served = per_call(read, arguments)
            rows.append([name, f"{cpu:.3f}", f"{wall:.3f}", served or "-"])
        db.session.remove()
        db.engine.dispose()
    return rows


if __name__ == "__main__":
    main()

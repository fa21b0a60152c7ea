"""What counting usage adds to the commits it joins, on SQLite and PostgreSQL, side by side.

Run from the project root: ``.venv/bin/python -m bench.usage_counts [--ops 300] [--rounds 5]``.

Usage is counted in the transaction of what it counts (a turn's ending, a tool call's outcome,
an upload), by one upsert that adds in the database. Here each thread commits ``--ops``
transactions that store an upload row, once alone and once with the upload's two usage counts
added (``add_usage``), from 1 and from 8 threads; all threads add to the same user's same row,
the worst case for contention. SQLite is a file in WAL mode as the app uses it; PostgreSQL is
a private server (``tests/support/postgres_server.py``) when ``initdb`` is installed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench.harness import machine, table
from bench.timing import per_second_together
from core.extensions import db
from core.models import Upload, User
from core.models.usage import add_usage
from tests.support import databases
from tests.support.postgres_server import PostgresServer, missing_reason
from webapp import create_app


def run(app, user_id: str, threads: int, ops: int, counted: bool) -> float:
    """Return the commits per second of ``threads`` threads committing ``ops`` uploads each."""

    def work(_: int, go) -> None:
        with app.app_context():
            go()
            for _ in range(ops):
                db.session.add(
                    Upload(owner_id=user_id, filename="a.txt", mime_type="text/plain", size=9,
                           text="some text")
                )  # fmt: skip
                if counted:
                    add_usage(user_id, [("uploads", "", 1), ("uploadBytes", "", 9)])
                db.session.commit()

    return per_second_together(threads, ops, work)


def measure(name: str, url: str, ops: int, rounds: int) -> list[list[object]]:
    """Return the table rows of one database: per thread count, the median plain and counted
    rates of ``rounds`` rounds, run turn about so that the machine's load falls on both."""
    app = create_app(
        {"SECRET_KEY": "bench", "DATABASE_URL": url, "REDIS_URL": "redis://127.0.0.1:1/0"}
    )
    databases.migrate(app)
    with app.app_context():
        user = User.make("bench", "password")
        db.session.add(user)
        db.session.commit()
        user_id = user.id
    rows = []
    for threads in (1, 8):
        run(app, user_id, threads, 20, True)  # warm the pool and the row
        plains, counteds = [], []
        for _ in range(rounds):
            plains.append(run(app, user_id, threads, ops, False))
            counteds.append(run(app, user_id, threads, ops, True))
        plain, counted = statistics.median(plains), statistics.median(counteds)
        rows.append([name, threads, plain, counted, f"{plain / counted:.2f}"])
    with app.app_context():
        db.engine.dispose()
    return rows


def main() -> None:
    """Measure on SQLite, and on PostgreSQL when a private server can be made; print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-usage-"))
    rows = measure("SQLite", f"sqlite:///{folder}/lookout.db", args.ops, args.rounds)
    reason = missing_reason()
    if reason is None:
        with PostgresServer() as server:
            rows += measure("PostgreSQL", server.url, args.ops, args.rounds)
    else:
        print(f"PostgreSQL not measured: {reason}")
    header = ["database", "threads", "commits/s alone", "commits/s counted", "alone ÷ counted"]
    print(table(header, rows))


if __name__ == "__main__":
    main()

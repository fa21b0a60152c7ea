"""What the turn limits add to sending a message, side by side with the same POSTs unchecked.

Run from the project root: ``.venv/bin/python -m bench.quota_checks [--posts 150] [--rounds 5]``.

A message is checked under its user's start lock in Redis (open turns counted in the database,
the hour's count taken by one Lua script) before it is stored. Here threads POST messages
through the app (the Flask test client, SQLite in WAL mode, a private Redis for the lock, the
counts and the queue; no worker, so every turn stays queued), once as Lookout does and once
with the start lock and the checks replaced by nothing: 1 thread, 8 threads of one user (who
wait for each other's lock, the worst case) and 8 threads of 8 users.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

from bench.harness import machine, make_bench_app, table
from bench.timing import per_second_together
from core import turn_starts
from core.extensions import db
from core.models import ApiToken, User
from tests.support.redis_server import RedisServer

ROOMY = {"QUOTA_OPEN_TURNS": 10_000, "QUOTA_TURNS_PER_HOUR": 1_000_000}


def make_users(app, count: int) -> list[str]:
    """Store ``count`` users with tokens; return their tokens."""
    tokens = []
    with app.app_context():
        for number in range(count):
            user = User.make(f"bench-{number}-{time.monotonic_ns()}", "password")
            row, token = ApiToken.make(user, "bench")
            db.session.add_all([user, row])
            tokens.append(token)
        db.session.commit()
    return tokens


def run(app, tokens: list[str], threads: int, posts: int) -> float:
    """Return the messages a second ``threads`` threads send, ``posts`` each, thread n as the
    user of ``tokens[n % len(tokens)]``, each into a conversation of its own."""

    def work(number: int, go) -> None:
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {tokens[number % len(tokens)]}"
        conversations = [
            client.post("/api/conversations", json={}).get_json()["id"] for _ in range(posts)
        ]
        go()
        for conversation in conversations:
            answer = client.post(
                f"/api/conversations/{conversation}/turns",
                json={"model": "bench/m", "content": "Hello"},
            )
            assert answer.status_code == 202, answer.get_json()

    return per_second_together(threads, posts, work)


@contextlib.contextmanager
def unchecked():
    """Replace the start lock and the turn checks with nothing, for the side-by-side."""
    starting, check_turn = turn_starts.starting, turn_starts.check_turn
    turn_starts.starting = lambda user_id: contextlib.nullcontext()
    turn_starts.check_turn = lambda start, conversation_id=None: None
    try:
        yield
    finally:
        turn_starts.starting, turn_starts.check_turn = starting, check_turn


def main() -> None:
    """Measure each case, turn about, and print a table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-quotas-"))
    with RedisServer() as redis_server:
        app = make_bench_app(folder, redis_server.url, provider=True, **ROOMY)
        rows = []
        for label, threads, users in (
            ("1 thread", 1, 1),
            ("8 threads, one user", 8, 1),
            ("8 threads, 8 users", 8, 8),
        ):
            checked_rates, unchecked_rates = [], []
            for number in range(args.rounds):
                # Turn about, each first in every other round: the database grows as it runs.
                for checked in (True, False) if number % 2 == 0 else (False, True):
                    tokens = make_users(app, users)
                    with contextlib.nullcontext() if checked else unchecked():
                        rate = run(app, tokens, threads, args.posts)
                    (checked_rates if checked else unchecked_rates).append(rate)
            plain, checked = statistics.median(unchecked_rates), statistics.median(checked_rates)
            rows.append([label, f"{plain:.1f}", f"{checked:.1f}", f"{plain / checked:.2f}"])
        with app.app_context():
            db.engine.dispose()
    header = ["senders", "messages/s unchecked", "messages/s checked", "unchecked ÷ checked"]
    print(table(header, rows))


if __name__ == "__main__":
    main()

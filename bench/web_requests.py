"""The web's own CPU per request, in process: a signed-in read that does almost nothing, a
signed-in read of a conversation, the POST of a turn, and an ended turn's event stream, through
the Flask test client.

Run from the project root: ``.venv/bin/python -m bench.web_requests [--requests 400]
[--rounds 3]``.

bench/web_parts.py measures the same requests through gunicorn, where the server, the sockets
and the idle wake-ups add their share and a 10 ms tick counts the CPU; this leaves them out
and counts ``time.process_time`` of this one process (SQLite in WAL mode, a private Redis for
the checks and the queue; no worker, so every turn stays queued). Each figure is the fastest
of ``--rounds`` rounds of ``--requests`` requests, one at a time, after 30 warm-ups.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.harness import machine, make_bench_app, table
from core.extensions import db
from core.models import ApiToken, User
from core.turn.lifecycle import finish_turn
from tests.support.redis_server import RedisServer

ROOMY = {"QUOTA_OPEN_TURNS": 1_000_000, "QUOTA_TURNS_PER_HOUR": 10_000_000}
WARM_UPS = 30


def per_request(run_one: Callable[[int], None], count: int, rounds: int) -> float:
    """Return the fastest round's CPU milliseconds per request."""
    best = float("inf")
    for number in range(rounds):
        started = time.process_time()
        for index in range(count):
            run_one(number * count + index)
        best = min(best, (time.process_time() - started) * 1000 / count)
    return best


def main() -> None:
    """Measure each request and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-web-"))
    with RedisServer() as redis_server:
        app = make_bench_app(folder, redis_server.url, provider=True, **ROOMY)
        with app.app_context():
            user = User.make("bench", "password")
            row, token = ApiToken.make(user, "bench")
            db.session.add_all([user, row])
            db.session.commit()
        client = app.test_client()
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
        posts = args.requests * args.rounds + WARM_UPS
        conversations = [
            client.post("/api/conversations", json={}).get_json()["id"] for _ in range(posts)
        ]

        def me(_number: int) -> None:
            assert client.get("/api/me").status_code == 200

        def conversation(_number: int) -> None:
            assert client.get(f"/api/conversations/{conversations[0]}").status_code == 200

        posted: list[str] = []

        def post(number: int) -> None:
            answer = client.post(
                f"/api/conversations/{conversations[number]}/turns",
                json={"model": "bench/m", "content": "Hello"},
            )
            assert answer.status_code == 202, answer.get_json()
            posted.append(answer.get_json()["turn"]["id"])

        def events(number: int) -> None:
            answer = client.get(f"/api/turns/{posted[number % WARM_UPS]}/events")
            assert answer.status_code == 200 and b"turn.completed" in answer.get_data()

        rows = []
        for name, run_one in (
            ("GET /api/me (signed in by token)", me),
            ("GET a conversation (signed in by token)", conversation),
            ("POST a turn (stays queued)", post),
        ):
            for number in range(WARM_UPS):
                run_one(posts - 1 - number if run_one is post else number)
            rows.append([name, f"{per_request(run_one, args.requests, args.rounds):.2f}"])
        with app.app_context():  # the first turns posted, ended: their streams end at once
            for turn_id in posted[:WARM_UPS]:
                finish_turn(turn_id, "completed")
        for number in range(WARM_UPS):
            events(number)
        name = "GET an ended turn's event stream, read whole (a thread's stream)"
        rows.append([name, f"{per_request(events, args.requests, args.rounds):.2f}"])
        with app.app_context():
            db.engine.dispose()
    rounds = f"fastest of {args.rounds} × {args.requests}"
    print(f"Web CPU per request in process, {rounds}; {machine()}")
    print()
    print(table(["request", "CPU ms"], rows))


if __name__ == "__main__":
    main()

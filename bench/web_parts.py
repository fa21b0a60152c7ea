"""The web's CPU by part, through gunicorn as ./run serves it: idle, a trivial request, a signed-in
read, the POST of a turn alone, and the event stream of an ended turn alone.

Run from the project root: ``.venv/bin/python -m bench.web_parts [--requests 60]
[--worker-class webapp.stream_worker.StreamingWorker]``.

bench/turn_cpu.py gives the web's CPU for a whole turn (its POST and its event stream, read while
the turn runs); this splits it. Each figure is the gunicorn process tree's CPU time (user and
system) over ``--requests`` requests made one at a time, less what the processes use idle over
the same wall time (measured first, over 10 s: the arbiter's and workers' wake-ups, the health
checker a ``/healthz`` starts). The POSTs are spaced 0.6 s apart so that each turn (a fake model
streaming 50 tokens over 0.2 s) ends before the next; their streams are then read whole, ended,
so that the stream's figure is the view, the hand-off and the hub's one delivery of 6-7 events.
"""

from __future__ import annotations

import argparse
import time

import requests

from bench.harness import EventReader, FakeModelProcess, Stack, machine, table

IDLE_SECONDS = 10
POST_SPACING_SECONDS = 0.6


def main() -> None:
    """Measure each part on one stack and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--worker-class", default="webapp.stream_worker.StreamingWorker")
    args = parser.parse_args()
    count = args.requests
    header = machine()
    stack = Stack(web="gunicorn", web_threads=16, web_worker_class=args.worker_class)
    rows = []
    with stack, FakeModelProcess("stream", "--seconds", "0.2", "--tokens", "50") as fake:
        requests.get(stack.web.url + "/healthz", timeout=300)
        model = stack.add_provider(fake.base_url)
        chat = stack.chat()
        conversations = [chat.new_conversation() for _ in range(count + 5)]
        for conversation in conversations[:5]:  # warm-ups
            turn = chat.start(conversation, "hi", model)
            EventReader(chat, turn["turn"]["id"]).run()
        time.sleep(2)
        before = stack.web_cpu_seconds()
        time.sleep(IDLE_SECONDS)
        idle = (stack.web_cpu_seconds() - before) / IDLE_SECONDS
        rows.append(["idle, per second", idle * 1000])

        def measure(name: str, run_one) -> None:
            before, started = stack.web_cpu_seconds(), time.monotonic()
            for number in range(count):
                run_one(number)
            spent = stack.web_cpu_seconds() - before
            spent -= idle * (time.monotonic() - started)
            rows.append([name, spent * 1000 / count])

        session = requests.Session()
        measure("GET /healthz", lambda _: session.get(stack.web.url + "/healthz"))
        path = f"/api/conversations/{conversations[0]}"
        measure("GET a conversation (signed in)", lambda _: chat.call("GET", path))
        turns: list[str] = []

        def post(number: int) -> None:
            turns.append(chat.start(conversations[5 + number], "hi", model)["turn"]["id"])
            time.sleep(POST_SPACING_SECONDS)

        measure("POST a turn alone", post)
        measure(
            "event stream of an ended 50-token turn, read whole",
            lambda number: EventReader(chat, turns[number]).run(),
        )
    print(f"Web CPU by part, {count} requests each, {args.worker_class}; {header}")
    print()
    print(table(["part", "web CPU ms"], rows))


if __name__ == "__main__":
    main()

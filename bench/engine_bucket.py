"""Engine rate limits across processes: what a loopback engine sees, paced and unpaced.

Run from the project root: ``.venv/bin/python -m bench.engine_bucket [--processes 2]
[--calls 10] [--rate 5]``.

Starts a private Redis and a SearXNG stub on 127.0.0.1 that notes when each request arrives,
then has ``--processes`` processes (``tests.support.search_burst``) send ``--calls`` searches
each, all at once, through the web_search tool with its Redis bucket: once at ``--rate`` and
once at 1000 a second (no pacing to speak of). Prints, side by side, the requests, the span
from first to last, the rate the stub saw and its busiest second; then what booking a slot
costs next to a Redis PING.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import redis

from bench.harness import machine, summary, table
from tests.support.processes import ROOT
from tests.support.redis_server import RedisServer
from tools.rates import RateLimit, RedisRates

BODY = json.dumps({"query": "q", "results": [], "unresponsive_engines": []}).encode()


class _Stub(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.arrivals.append(time.monotonic())  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:
        pass


def burst(redis_url: str, rate: float, processes: int, calls: int) -> list[float]:
    """Return the arrival times at a fresh stub of ``processes`` x ``calls`` searches."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    server.arrivals = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    options = json.dumps({"engine": "searxng", "baseURL": url, "rate": rate})
    start_at = str(time.time() + 3)
    command = [sys.executable, "-m", "tests.support.search_burst", redis_url, options, start_at]
    running = [subprocess.Popen([*command, str(calls)], cwd=ROOT) for _ in range(processes)]
    for process in running:
        process.wait(timeout=300)
    server.shutdown()
    server.server_close()
    return sorted(server.arrivals)  # type: ignore[attr-defined]


def row(label: str, arrivals: list[float]) -> list[object]:
    """Return one table row: requests, span, observed rate and busiest second."""
    span = arrivals[-1] - arrivals[0] if len(arrivals) > 1 else 0.0
    observed = (len(arrivals) - 1) / span if span else float("inf")
    busiest = max(sum(1 for t in arrivals if s <= t < s + 1) for s in arrivals)
    return [label, len(arrivals), span, observed, busiest]


def booking_cost(redis_url: str, rounds: int = 2000) -> tuple[float, float]:
    """Return the median microseconds of booking an uncontended slot and of a PING."""
    client = redis.Redis.from_url(redis_url)
    rates = RedisRates(client)
    booked, pinged = [], []
    for index in range(rounds):
        started = time.perf_counter()
        rates.book(f"bench:{index % 10}", RateLimit(1_000_000), longest_wait=1)
        booked.append(time.perf_counter() - started)
        started = time.perf_counter()
        client.ping()
        pinged.append(time.perf_counter() - started)
    return summary(booked)[0] * 1e6, summary(pinged)[0] * 1e6


def main() -> None:
    """Run both bursts and the booking cost, and print Markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rate", type=float, default=5)
    args = parser.parse_args()
    with RedisServer() as server:
        paced = burst(server.url, args.rate, args.processes, args.calls)
        unpaced = burst(server.url, 1000, args.processes, args.calls)
        book_us, ping_us = booking_cost(server.url)
    print(machine())
    print(
        table(
            ["bucket rate", "requests", "span s", "rate seen /s", "busiest second"],
            [row(f"{args.rate:g} /s", paced), row("1000 /s", unpaced)],
        )
    )
    print()
    print(
        table(
            ["median µs: book a slot", "median µs: PING", "ratio"],
            [[book_us, ping_us, book_us / ping_us]],
        )
    )


if __name__ == "__main__":
    main()

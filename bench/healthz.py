"""/healthz under a burst: latency and the Redis connections it opens, on a real stack.

Run from the project root: ``.venv/bin/python -m bench.healthz [--requests 100] [--rounds 5]``.

Starts a private Redis, a worker and the app over HTTP on 127.0.0.1, warms /healthz once, then
sends ``--requests`` concurrent GETs ``--rounds`` times, and prints p50/p95 latency and how many
connections Redis accepted during the bursts (from its ``total_connections_received``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import redis
import requests

from bench.harness import machine, make_bench_app, summary, table
from tests.support.live_server import LiveServer
from tests.support.redis_server import RedisServer
from tests.support.workers import CeleryWorker


def burst(url: str, count: int) -> list[float]:
    """Return the seconds each of ``count`` concurrent GETs of url took; all must answer 200."""

    def probe(_: int) -> float:
        started = time.perf_counter()
        response = requests.get(url, timeout=60)
        assert response.status_code == 200, response.text
        return time.perf_counter() - started

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(probe, range(count)))


def main() -> None:
    """Run the bursts and print one Markdown table row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-healthz-"))
    with RedisServer() as server:
        app = make_bench_app(
            folder, server.url, CELERY_QUEUE=f"lookout-bench-{uuid.uuid4().hex[:8]}"
        )
        with CeleryWorker(app, folder), LiveServer(app) as web:
            url = f"{web.url}/healthz"
            requests.get(url, timeout=30)
            counter = redis.Redis.from_url(server.url)
            before = counter.info("stats")["total_connections_received"]
            latencies: list[float] = []
            for _ in range(args.rounds):
                latencies += burst(url, args.requests)
            opened = counter.info("stats")["total_connections_received"] - before
    median, p95 = summary(latencies)
    print(machine())
    print(
        table(
            ["requests", "concurrent", "p50 ms", "p95 ms", "Redis connections opened"],
            [[len(latencies), args.requests, median * 1000, p95 * 1000, opened]],
        )
    )


if __name__ == "__main__":
    main()

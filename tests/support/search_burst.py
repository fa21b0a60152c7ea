"""A process that runs a burst of web searches through a shared Redis bucket, for rate tests.

``python -m tests.support.search_burst REDIS_URL OPTIONS_JSON START_AT CALLS`` starts the
web_search tool with the options, waits until the wall-clock time START_AT, runs CALLS searches
at once (one thread each) with limits booked in Redis as a worker does, and exits 1 if one failed.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import redis

from tools.api import Signal
from tools.rates import RedisRates
from tools.testing import start_plugin, tool_context_for_test
from tools.web_search import plugin


def main(redis_url: str, options: str, start_at: str, calls: str) -> int:
    tool = start_plugin(plugin, json.loads(options))["web_search"]
    rates = RedisRates(redis.Redis.from_url(redis_url))
    failures: list[BaseException] = []

    def search() -> None:
        ctx, _ = tool_context_for_test(rates=rates, signal=Signal.after(tool.timeout_seconds))
        try:
            tool.execute(tool.validate_input({"query": "burst"}), ctx)
        except Exception as exc:  # reported below; the parent test reads the exit status
            failures.append(exc)

    threads = [threading.Thread(target=search) for _ in range(int(calls))]
    time.sleep(max(0.0, float(start_at) - time.time()))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for failure in failures:
        print(f"search failed: {failure!r}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

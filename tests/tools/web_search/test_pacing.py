"""Engines asked no faster than their rate, across processes, and the words when busy."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid

import pytest
import redis

from tests.support.processes import ROOT
from tests.support.quotas import wait_clear_of_midnight
from tools.api import Signal, ToolError
from tools.rates import KEY_PREFIX, RedisRates
from tools.web_search.engines import brave
from tools.web_search.pacing import pace

NO_RESULTS = json.dumps({"query": "q", "results": [], "unresponsive_engines": []})
ONE_RESULT = {"type": "search", "web": {"results": [{"title": "T", "url": "https://a.example/"}]}}


@pytest.fixture
def rates(redis_url):
    """Rates shared in the suite's Redis, which is clear of midnight for long enough that no
    test sees a day's cap start again while it counts."""
    client = redis.Redis.from_url(redis_url)
    wait_clear_of_midnight(client)
    yield RedisRates(client)
    client.close()


@pytest.fixture
def timed_engine(loopback):
    """A SearXNG stub that notes when each request arrived (its own clock); ``.arrivals``."""
    arrivals: list[float] = []
    lock = threading.Lock()
    body = NO_RESULTS.encode()

    def reply(handler):
        with lock:
            arrivals.append(time.monotonic())
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    server = loopback(reply)
    server.arrivals = arrivals
    return server


def test_two_processes_bursting_on_one_engine_never_exceed_its_rate_at_the_engine(
    redis_url, timed_engine
):
    rate, per_process = 2, 4
    options = {"engine": "searxng", "baseURL": timed_engine.url, "rate": rate}
    start_at = time.time() + 2  # both processes have imported everything by then
    command = [sys.executable, "-m", "tests.support.search_burst", redis_url, json.dumps(options)]
    processes = [
        subprocess.Popen([*command, str(start_at), str(per_process)], cwd=ROOT) for _ in range(2)
    ]
    assert [p.wait(timeout=60) for p in processes] == [0, 0]
    arrivals = sorted(timed_engine.arrivals)
    assert len(arrivals) == 2 * per_process
    # Slots are booked 1/rate apart, but a request reaches the engine a moment after its slot
    # (more on a loaded machine): one second may hold one more than the rate, and the span may
    # fall short of the slots' by that moment (allowed up to half an interval) - never the
    # burst of eight at once that two unpaced processes send.
    busiest = max(sum(1 for t in arrivals if start <= t < start + 1) for start in arrivals)
    assert busiest <= rate + 1
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1 - 0.5) / rate


def test_a_search_with_no_slot_before_its_deadline_gets_the_busy_sentence(
    web_search, search, rates, timed_engine
):
    tool = web_search(engine="searxng", baseURL=timed_engine.url, rate=0.1)
    search(tool, rates=rates, signal=Signal.after(20))
    with pytest.raises(ToolError) as info:
        search(tool, rates=rates, signal=Signal.after(6))
    assert info.value.message == (
        "The search engine SearXNG allows 1 search every 10 seconds and is busy; "
        "try again in a moment."
    )
    assert len(timed_engine.arrivals) == 1


def test_a_search_past_the_days_cap_gets_the_sentence_with_the_reset(
    web_search, search, rates, timed_engine
):
    tool = web_search(engine="searxng", baseURL=timed_engine.url, rate=100, dailyCap=2)
    search(tool, rates=rates)
    search(tool, rates=rates)
    with pytest.raises(ToolError) as info:
        search(tool, rates=rates)
    assert info.value.message == (
        "The search engine SearXNG allows 2 searches a day and today's are used up; "
        "the count starts again at 00:00 UTC."
    )
    assert len(timed_engine.arrivals) == 2


def test_a_users_own_key_has_a_bucket_of_its_own_at_the_engines_rate(
    web_search, search, rates, engine_replies, redis_url
):
    admin_key, user_key = f"admin-{uuid.uuid4().hex}", f"user-{uuid.uuid4().hex}"
    tool = web_search(engine="brave", apiKey=admin_key, rate=0.1, dailyCap=1)
    engine_replies.get(brave.URL, json=ONE_RESULT)
    engine_replies.get(brave.URL, json=ONE_RESULT)
    search(tool, rates=rates, signal=Signal.after(20))
    # The admin's bucket is used up for the day, but the user's key is another bucket.
    search(tool, rates=rates, settings={"engine": "brave", "apiKey": user_key})
    with pytest.raises(ToolError) as info:
        search(tool, rates=rates, settings={"engine": "brave", "apiKey": ""})
    assert "allows 1 search a day" in info.value.message
    names = [n.decode() for n in redis.Redis.from_url(redis_url).keys(f"{KEY_PREFIX}web_search:*")]
    assert names and not [n for n in names if admin_key in n or user_key in n]


@pytest.mark.parametrize(
    ("per_second", "words"),
    [
        (1, "1 search a second"),
        (2.5, "2.5 searches a second"),
        (100 / 60, "1.67 searches a second"),
        (0.5, "1 search every 2 seconds"),
    ],
)
def test_a_rate_is_said_in_words(per_second, words):
    assert pace(per_second) == words

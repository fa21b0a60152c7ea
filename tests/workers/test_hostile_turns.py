"""Hostile work in a real worker: a parse is killed on cancel, and nothing outlives its turn.

The worker reads pages from a loopback site (ALLOW_PRIVATE_NETWORKS, as the worker is another
process), with web_fetch and the PDF ingester parsing in its parser processes.

Bounds on the hostile work are in CPU seconds, the worker's and its parsers': a busy machine
stretches the clock for every process, and the 500 ms wall-clock gaps and the 62 s reading
these tests asserted before failed at a load average of 30 with nothing wrong. The clock only
bounds a hang (HANG_SECONDS).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter

import psutil
import pytest
import requests

from core.extensions import db, get_redis
from core.models import Provider
from core.turn.state import key
from tests.support.chat import ChatClient, parse_sse
from tests.support.chat_apps import loopback_chat_app
from tests.support.fake_model import FakeModel, Reply
from tests.support.sites import Site
from tests.tools.web_fetch.test_hostile import CASES

SPACING = 0.05  # the streaming model's own time between pieces
# The worker's CPU seconds (its own and its parser processes') the other turn may wait for a
# delta while hostile pages are read: a stall is the worker spending CPU while that turn gets
# nothing, a wait a busy machine does not stretch as it stretches the clock.
STALL_CPU_SECONDS = 0.5
PARSE_CPU_SECONDS = 1.0  # the parse of the hostile page (2 s of CPU in all) before the cancel
HANG_SECONDS = 240  # a bound that only a hang reaches, however busy the machine
SAMPLE_SECONDS = 0.02
FIND_SECONDS = 0.5


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory, redis_url, sqlite_template):
    """Chat with web_fetch and pdf, two tool calls a step, and no abandoned thread tolerated."""
    with loopback_chat_app(
        tmp_path_factory,
        redis_url,
        sqlite_template,
        "tests.workers.turn_plugins,tools.web_fetch,tools.pdf",
        PARSER_CPU_SECONDS=60,
        TOOL_CALLS_PER_STEP=2,
        ABANDONED_MAX=0,
    ) as app:
        yield app


@pytest.fixture
def site():
    with Site("127.0.0.1") as server:
        yield server


@pytest.fixture
def second_model(chat_app):
    """Another scripted model, as another provider: "<name>/m"."""
    with FakeModel() as fake:
        name = f"second-{uuid.uuid4().hex[:8]}"
        with chat_app.app_context():
            db.session.add(
                Provider(name=name, base_url=fake.base_url, models=[{"name": "m", "tools": True}])
            )
            db.session.commit()
        yield fake, f"{name}/m"


class TimedEvents(threading.Thread):
    """Reads a turn's events in the background, with the time each arrived and a count by name."""

    def __init__(self, chat: ChatClient, turn_id: str) -> None:
        super().__init__(daemon=True)
        self.chat, self.turn_id = chat, turn_id
        self.events: list[tuple[float, str, dict]] = []
        self.counts: Counter[str] = Counter()

    def run(self) -> None:
        with self.chat.call(
            "GET", f"/api/turns/{self.turn_id}/events", stream=True, timeout=HANG_SECONDS
        ) as response:
            for event in parse_sse(response.iter_lines(decode_unicode=True)):
                self.events.append((time.monotonic(), event.name, event.data))
                self.counts[event.name] += 1

    def wait_for(self, name: str, count: int = 1) -> float:
        deadline = time.monotonic() + HANG_SECONDS
        while True:
            times = [t for t, n, _ in self.events if n == name]
            if len(times) >= count:
                return times[count - 1]
            assert time.monotonic() < deadline, f"no {count} {name}: {self.events[-5:]}"
            time.sleep(0.02)


def stream_another_turn(chat: ChatClient, model: tuple[FakeModel, str]) -> TimedEvents:
    """Start a turn whose model streams forever, and return its events once it streams."""
    fake, model_id = model
    fake.script(Reply.forever("tick ", delay=SPACING))
    streaming = chat.start(chat.new_conversation(), "talk", model_id)["turn"]["id"]
    other = TimedEvents(chat, streaming)
    other.start()
    other.wait_for("text.delta", 3)
    return other


class WorkerCpu:
    """The CPU seconds a worker and its descendants (its parser processes) have used since it
    was made; a process found later counts from when it was found. Processes are looked for
    every FIND_SECONDS: a look reads every process's stat, too slow for each sample."""

    def __init__(self, pid: int) -> None:
        self.worker = psutil.Process(pid)
        self.processes: dict[int, psutil.Process] = {}
        self.first: dict[int, float] = {}
        self.spent: dict[int, float] = {}
        self.found_at = 0.0
        self.find()

    def find(self) -> None:
        for process in [self.worker, *self.worker.children(recursive=True)]:
            if process.pid not in self.processes:
                self.processes[process.pid] = process
                self.first[process.pid] = self.spent[process.pid] = cpu_seconds(process)
        self.found_at = time.monotonic()

    def __call__(self) -> float:
        if time.monotonic() - self.found_at > FIND_SECONDS:
            self.find()
        for pid, process in self.processes.items():
            self.spent[pid] = max(self.spent[pid], cpu_seconds(process))
        return sum(self.spent[pid] - self.first[pid] for pid in self.processes)


class StallWatch(threading.Thread):
    """Samples, while the block runs, the worker's CPU seconds and the other turn's deltas:
    how much CPU the worker spent while that turn waited for a delta."""

    def __init__(self, other: TimedEvents, worker_pid: int) -> None:
        super().__init__(daemon=True)
        self.other, self.cpu = other, WorkerCpu(worker_pid)
        self.samples: list[tuple[float, int]] = []
        self.done = threading.Event()

    def __enter__(self) -> StallWatch:
        self.sample()
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.done.set()
        self.join()
        self.sample()

    def run(self) -> None:
        while not self.done.wait(SAMPLE_SECONDS):
            self.sample()

    def sample(self) -> None:
        self.samples.append((self.cpu(), self.other.counts["text.delta"]))

    def spent(self) -> float:
        """Return the CPU seconds the worker spent while the block ran."""
        return self.samples[-1][0] - self.samples[0][0]

    def longest_wait(self) -> float:
        """Return the most CPU seconds the worker spent between two of the other turn's deltas
        (or from the start, or until the end, without one)."""
        waits, since = [0.0], self.samples[0]
        for sample in self.samples[1:]:
            waits.append(sample[0] - since[0])
            if sample[1] != since[1]:
                since = sample
        return max(waits)

    def assert_no_stall(self) -> None:
        """Assert that the other turn streamed on: it never waited for a delta while the
        worker spent STALL_CPU_SECONDS of CPU (the hostile pages' parsers included)."""
        assert self.samples[-1][1] > self.samples[0][1], "the other turn streamed nothing"
        waited = self.longest_wait()
        assert waited < STALL_CPU_SECONDS, (
            f"the other turn waited for a delta while the worker spent {waited:.2f} s of CPU"
        )


def busy_parser(worker_pid: int) -> tuple[psutil.Process, float]:
    """Return the worker's descendant process that is using a CPU (the parser at work), the
    first to spend 0.3 s of CPU from when it was first seen, and its CPU seconds then (a
    parser process may have done earlier tests' jobs)."""
    deadline = time.monotonic() + HANG_SECONDS
    first_seen: dict[int, float] = {}
    while time.monotonic() < deadline:
        for child in psutil.Process(worker_pid).children(recursive=True):
            spent = cpu_seconds(child)
            if spent - first_seen.setdefault(child.pid, spent) > 0.3:
                return child, first_seen[child.pid]
        time.sleep(0.05)
    raise AssertionError("no parser process was working")


def cpu_seconds(process: psutil.Process) -> float:
    """Return the CPU seconds a process has used, 0 once it has ended (it may end at any time)."""
    try:
        return sum(process.cpu_times()[:2])
    except psutil.NoSuchProcess:
        return 0.0


def has_ended(process: psutil.Process) -> bool:
    """Whether a process has ended (gone or a zombie), asked in one call that cannot race its
    exit: is_running() then status() raised NoSuchProcess when it ended in between."""
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.timeout(2 * HANG_SECONDS)  # the bounds below catch hangs on a loaded machine
def test_cancel_kills_the_parser_of_a_hostile_page_and_other_turns_stream_on(
    make_chat, chat_worker, fake_model, model_ids, second_model, site
):
    """A parse goes on for PARSE_CPU_SECONDS of its CPU while another turn streams in the
    same worker; the cancel kills it. Every bound is in CPU seconds, which a busy machine does
    not stretch as it does the clock (the clock bounds only catch a hang)."""
    site.serve("/hostile", "text/html", b"<html><body>" + b"<b>x</b>" * 550_000 + b"</body>")
    chat = make_chat()
    other = stream_another_turn(chat, second_model)

    fake_model.script(Reply.tool_calls([("web_fetch", {"url": site.url("/hostile")})]))
    reading = chat.start(chat.new_conversation(), "read it", model_ids[0])["turn"]["id"]
    events = TimedEvents(chat, reading)
    events.start()
    events.wait_for("tool.started")
    with StallWatch(other, chat_worker.process.pid) as stalls:
        parser, working = busy_parser(chat_worker.process.pid)
        deadline = time.monotonic() + HANG_SECONDS
        # The watch counts a parser from when it found it, which a busy machine may delay:
        # the parse goes on until the watch, too, saw enough CPU for a stall to show.
        while (
            cpu_seconds(parser) - working < PARSE_CPU_SECONDS
            or stalls.spent() < 2 * STALL_CPU_SECONDS
        ):
            assert not events.counts["tool.finished"], "the parse ended before the cancel"
            assert time.monotonic() < deadline, "the parser stopped working"
            time.sleep(SAMPLE_SECONDS)
        assert chat.call("POST", f"/api/turns/{reading}/cancel").status_code == 200
        # The cancel is stored once its request has answered.
        spent_at_cancel = cpu_seconds(parser)
        last_seen = spent_at_cancel
        while not has_ended(parser):
            last_seen = max(last_seen, cpu_seconds(parser))
            past = last_seen - spent_at_cancel
            assert past < 0.5, "the parser worked 0.5 s of CPU past the cancel"
            time.sleep(0.01)
        events.wait_for("turn.cancelled")

    stalls.assert_no_stall()
    assert chat.call("POST", f"/api/turns/{other.turn_id}/cancel").status_code == 200
    other.join(HANG_SECONDS)
    events.join(HANG_SECONDS)


HEAVY = ["entity soup", "pdf pages sharing one huge stream", "gzip bomb", "huge attribute"]


@pytest.mark.timeout(2 * HANG_SECONDS)  # the bounds below catch hangs on a loaded machine
def test_hostile_pages_read_in_one_step_end_in_time_while_another_turn_streams(
    make_chat, chat_worker, fake_model, model_ids, second_model, site
):
    """The heaviest cases of the hostile-content suite, read by one model step in a real
    worker: each call ends with output, a sentence or its deadline's timeout, the worker grows
    by under 100 MiB, and a turn streaming in the same worker never waits for a delta while
    the worker spends STALL_CPU_SECONDS of CPU on the pages."""
    for number, name in enumerate(HEAVY):
        site.route(f"/case{number}", CASES[name].serve)
        warm = requests.get(site.url(f"/case{number}"), stream=True, timeout=HANG_SECONDS)
        warm.close()  # the body is made beforehand (a reply makes it before its headers)
    chat = make_chat()
    other = stream_another_turn(chat, second_model)
    worker = psutil.Process(chat_worker.process.pid)
    rss = worker.memory_info().rss

    calls = [("web_fetch", {"url": site.url(f"/case{n}")}) for n in range(2)]
    more = [("web_fetch", {"url": site.url(f"/case{n}")}) for n in range(2, len(HEAVY))]
    fake_model.script(Reply.tool_calls(calls), Reply.tool_calls(more), Reply.text("Read."))
    with StallWatch(other, chat_worker.process.pid) as stalls:
        started = chat.start(chat.new_conversation(), "read them", model_ids[0])
        turn = chat.wait(started["turn"]["id"], timeout=HANG_SECONDS)

    assert turn["status"] == "completed"
    results = [p for p in chat.reply(turn)["parts"] if p["type"] == "tool-result"]
    assert len(results) == len(HEAVY)
    for result in results:
        assert result["outcome"] in ("ok", "error", "timeout"), result
        assert "unexpectedly" not in (result.get("error") or "")
    assert worker.memory_info().rss - rss < 100 << 20
    assert stalls.spent() >= 2 * STALL_CPU_SECONDS  # a stall for all the pages would show
    stalls.assert_no_stall()
    assert chat.call("POST", f"/api/turns/{other.turn_id}/cancel").status_code == 200
    other.join(HANG_SECONDS)


def test_a_call_that_timed_out_shows_no_source_and_its_late_cache_write_is_dropped(
    chat, chat_app, chat_worker, fake_model, model_ids
):
    """Regression (issue 10): a timed-out call's citation showed live, then vanished on
    reload; and its late turn-cache write recreated the deleted cache for 24 hours."""
    fake_model.script(Reply.tool_calls([("late_source", {})]), Reply.text("Done."))
    started = chat.start(
        chat.new_conversation(), "go", model_ids[0], generation={"tools": ["late_source"]}
    )
    turn_id = started["turn"]["id"]
    events = chat.events(turn_id)
    turn = chat.wait(turn_id)
    assert turn["status"] == "completed"
    assert not [e for e in events if e.name == "source.added"]
    parts = chat.reply(turn)["parts"]
    assert [p["outcome"] for p in parts if p["type"] == "tool-result"] == ["timeout"]
    assert not [p for p in parts if p["type"] == "source"]
    time.sleep(2.5)  # the abandoned thread writes to the turn cache now
    with chat_app.app_context():
        assert not get_redis().exists(key(turn_id, "cache"))
    log = chat_worker.log.read_text()
    assert "this worker takes no new task: 1 tool threads are still running" in log
    assert "this worker takes tasks again" in log


def test_tool_calls_past_the_step_limit_get_an_error_result_the_model_reads(
    chat, chat_worker, fake_model, model_ids
):
    calls = [("echo", {"text": str(n)}) for n in range(3)]
    fake_model.script(Reply.tool_calls(calls), Reply.text("Two of three."))
    turn = chat.run(chat.new_conversation(), "go", model_ids[0])
    assert turn["status"] == "completed"
    results = [p for p in chat.reply(turn)["parts"] if p["type"] == "tool-result"]
    assert [r["outcome"] for r in results] == ["ok", "ok", "error"]
    sentence = (
        "Only 2 tool calls run per step, so this one was not run. "
        "Call it again in your next step if you still need it."
    )
    assert results[2]["error"] == sentence
    sent = fake_model.chat_requests()[-1].json["messages"]
    assert sentence in [m for m in sent if m["role"] == "tool"][-1]["content"]

"""Fault tests: a private chat stack per test, and how long each fault took to recover.

Each test breaks one part under a running turn (a worker, Redis, PostgreSQL, the model, an
engine, the web process), then checks the turn ended in a clear, stored state with nothing
already stored lost. ``record_recovery`` notes the time from the fault to that state; the
figures are printed at the end of the run (docs/reliability.md, "Faults", keeps them).

Fixtures:
    make_stack(**settings)  an app on a fresh SQLite file (or settings' DATABASE_URL, migrated
                            here), the fake model as provider "fake" (model "fake/m"), the app
                            served over HTTP and a ChatClient of a new user; workers are started
                            by the test
    shared_stack            one such Stack, with web_search loaded and a running worker, shared
                            by the tests whose faults leave the worker, the database and Redis as
                            they were (a worker takes seconds to start); its fake's script is
                            empty and its responder unset between tests
"""

from __future__ import annotations

import re
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from flask import Flask

from tests.support import databases
from tests.support.chat import ChatClient, parse_sse
from tests.support.fake_model import FakeModel
from tests.support.live_server import LiveServer
from tests.support.processes import HANG_SECONDS, signal_group, wait_until
from tests.support.workers import CeleryWorker, pings
from tests.workers.conftest import CHAT_SETTINGS, make_chat_app, private_chat
from tests.workers.test_cancel import EventReader
from webapp import queue

RECOVERIES: list[tuple[str, float]] = []


def record_recovery(fault: str, seconds: float) -> None:
    """Note how many seconds ``fault`` took to end in a clear, stored state."""
    RECOVERIES.append((fault, seconds))
    print(f"recovered from {fault} in {seconds:.2f} s")


def pytest_terminal_summary(terminalreporter):
    """List the recovery times measured in this run, for docs/reliability.md."""
    if RECOVERIES:
        terminalreporter.section("fault recovery times (seconds)")
        for fault, seconds in RECOVERIES:
            terminalreporter.write_line(f"{seconds:7.2f}  {fault}")


class Follower(threading.Thread):
    """Follows a turn's events as a page does: when the stream breaks or ends before the turn's
    ending event, it reconnects with Last-Event-ID and resumes after the last event it saw."""

    ENDINGS = ("turn.completed", "turn.failed", "turn.cancelled")

    def __init__(self, chat: ChatClient, turn_id: str, timeout: float = HANG_SECONDS) -> None:
        super().__init__(daemon=True)
        self.chat, self.turn_id, self.timeout = chat, turn_id, timeout
        self.events: list = []
        self.connections = 0

    def run(self) -> None:
        deadline = time.monotonic() + self.timeout
        last_id = None
        while time.monotonic() < deadline:
            headers = {"Last-Event-ID": last_id} if last_id else {}
            try:
                self.connections += 1
                response = self.chat.call(
                    "GET",
                    f"/api/turns/{self.turn_id}/events",
                    headers=headers,
                    stream=True,
                    timeout=10,
                )
                if response.status_code == 200:
                    for event in parse_sse(response.iter_lines(decode_unicode=True)):
                        self.events.append(event)
                        last_id = event.id or last_id
                        if event.name in self.ENDINGS:
                            return
            except requests.RequestException:
                pass  # the server went away: try again, as EventSource does
            time.sleep(0.2)

    def text(self) -> str:
        """Every text delta seen, joined."""
        return "".join(e.data["text"] for e in self.events if e.name == "text.delta")

    def wait_for_text(self, text: str, timeout: float = HANG_SECONDS) -> None:
        """Wait until ``text`` has streamed."""
        wait_until(lambda: text in self.text(), timeout, f"{text!r} never streamed")

    def wait_for_event(self, name: str, timeout: float = HANG_SECONDS) -> None:
        """Wait until an event named ``name`` arrived."""
        wait_until(
            lambda: any(e.name == name for e in self.events), timeout, f"no {name}: {self.events}"
        )


class Stopwatch:
    """Seconds since it was made (or last ``restart``)."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def restart(self) -> None:
        self.started = time.monotonic()

    def seconds(self) -> float:
        return time.monotonic() - self.started


@dataclass
class Stack:
    """One test's app, fake model, web server and user; ``worker()`` starts a worker."""

    app: Flask
    fake: FakeModel
    web: LiveServer
    chat: ChatClient
    logs: Path
    workers: list[CeleryWorker] = field(default_factory=list)

    def start_turn(self, prompt: str, tools: tuple[str, ...] = ()) -> tuple[str, str, EventReader]:
        """Send ``prompt`` in a new conversation (offering ``tools``, when named) and follow its
        turn's events; return (conversation, turn id, the started reader)."""
        conversation = self.chat.new_conversation()
        generation = {"generation": {"tools": list(tools)}} if tools else {}
        turn_id = self.chat.start(conversation, prompt, "fake/m", **generation)["turn"]["id"]
        reader = EventReader(self.chat, turn_id)
        reader.start()
        return conversation, turn_id, reader

    def worker(self, celery_overrides: dict | None = None) -> CeleryWorker:
        """Start a worker for the app (stopped at the end of the test) and return it."""
        return self.start_workers(1, celery_overrides)[0]

    def start_workers(self, count: int, celery_overrides: dict | None = None) -> list:
        """Start ``count`` workers side by side (each takes seconds to start); return them."""
        made = [
            CeleryWorker(self.app, self.logs, concurrency=8, celery_overrides=celery_overrides)
            for _ in range(count)
        ]
        self.workers.extend(made)
        threads = [threading.Thread(target=w.start) for w in made]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert all(pings(self.app) for _ in made) and all(w.process for w in made)
        return made

    @staticmethod
    def received(worker: CeleryWorker, task_name: str) -> int:
        """How many deliveries of ``task_name`` the worker's log shows (a retry is one more)."""
        pattern = rf"Task {re.escape(task_name)}\[[^\]]+\] received"
        return len(re.findall(pattern, worker.log.read_text(errors="replace")))

    @staticmethod
    def ended(worker: CeleryWorker, task_name: str) -> int:
        """How many runs of ``task_name`` the worker's log shows ended (succeeded, raised or
        retried): once each delivery has, nothing it would publish or store is still to come."""
        pattern = rf"Task {re.escape(task_name)}\[[^\]]+\] (succeeded|raised|retry)"
        return len(re.findall(pattern, worker.log.read_text(errors="replace")))

    def pause_workers(self) -> None:
        """Make every worker stop taking tasks from the queue (what it runs goes on, and so
        does its reaper), as a queue backed up behind other turns' work would."""
        self._consumers("cancel_consumer")

    def resume_workers(self) -> None:
        """Make every worker take tasks from the queue again."""
        self._consumers("add_consumer")

    def _consumers(self, command: str) -> None:
        with self.app.app_context():
            client = queue.get_client()
            with client.connection_for_write() as connection:  # closed here, not at exit
                replies = getattr(client.control, command)(
                    self.app.config["CELERY_QUEUE"],
                    destination=[worker.hostname for worker in self.workers],
                    reply=True,
                    timeout=2,
                    connection=connection,
                )
        assert len(replies) == len(self.workers), replies

    def kill(self, worker: CeleryWorker) -> None:
        """SIGKILL the worker, as the kernel's OOM killer or a lost machine would."""
        worker.process.kill()
        worker.process.wait(10)

    def close(self) -> None:
        """Kill every worker with its parser processes: what they held is thrown away with the
        test, and a warm shutdown would cost seconds a test."""
        for worker in self.workers:
            if worker.process is not None:
                signal_group(worker.process, signal.SIGKILL)
                worker.process.wait(10)


@pytest.fixture
def make_stack(make_app, tmp_path) -> Iterator:
    """Return a factory of Stacks; settings are added to the chat tests' settings."""
    with ExitStack() as stack:

        def make(**settings) -> Stack:
            app = make_app(**{**CHAT_SETTINGS, **settings})
            if "DATABASE_URL" in settings:
                databases.migrate(app)
            fake = stack.enter_context(FakeModel())
            web = stack.enter_context(LiveServer(app))
            chat = private_chat(app, fake, web.url, f"u-{uuid.uuid4().hex[:8]}")
            made = Stack(app, fake, web, chat, tmp_path)
            stack.callback(made.close)
            return made

        yield make


SHARED_SETTINGS = {
    "LOOKOUT_PLUGINS": "tests.workers.turn_plugins,tools.web_search",
    # The reaper is not under test here: a step's first load of web_search can outlast 3 s.
    "TURN_STALE_SECONDS": 30,
}


@pytest.fixture(scope="package")
def shared_stack_once(tmp_path_factory, redis_url, sqlite_template) -> Iterator[Stack]:
    """The Stack behind ``shared_stack``, made once for the package."""
    app = make_chat_app(tmp_path_factory, redis_url, sqlite_template, **SHARED_SETTINGS)
    logs = tmp_path_factory.mktemp("faults")
    with FakeModel() as fake, LiveServer(app) as web:
        made = Stack(app, fake, web, private_chat(app, fake, web.url, "shared"), logs)
        made.worker()
        try:
            yield made
        finally:
            made.close()


@pytest.fixture
def shared_stack(shared_stack_once) -> Iterator[Stack]:
    """The package's shared Stack, its fake model reset after each test."""
    yield shared_stack_once
    shared_stack_once.fake.clear_script()

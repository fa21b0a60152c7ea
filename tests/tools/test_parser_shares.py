"""Fair shares of the parser processes: who runs next, how long a job may wait, and whose
share a job counts against (``tools.parser_shares``)."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from tests.support.processes import wait_until
from tools.api import Cancelled, Signal
from tools.parser_shares import FairParsers, ParsersBusy, acting_for
from tools.parsers import InlineParsers


class Gates:
    """Jobs that record when they start and end only when their gate is opened."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.gates: dict[str, threading.Event] = {}

    def job(self, name: str) -> str:
        self.started.append(name)
        self.gates.setdefault(name, threading.Event()).wait(30)
        return f"read {name}"

    def open(self, name: str) -> None:
        self.gates.setdefault(name, threading.Event()).set()


def submit(pool: ThreadPoolExecutor, shares: FairParsers, gates: Gates, user: str, name: str):
    def run() -> str:
        with acting_for(user):
            return shares.run(gates.job, name, signal=Signal.after(30), what=name)

    return pool.submit(run)


@pytest.fixture
def gates():
    made = Gates()
    yield made
    for name in [*made.gates, *made.started]:
        made.open(name)


def test_a_user_arriving_while_another_holds_every_slot_runs_before_the_others_queued_jobs(
    gates,
):
    shares = FairParsers(InlineParsers(), slots=2, queue_seconds=30)
    with ThreadPoolExecutor(max_workers=8) as pool:
        ann = [submit(pool, shares, gates, "ann", f"ann{n}") for n in range(5)]
        wait_until(
            lambda: shares.waiting() == {"ann": 3}, 10, "ann fills both slots", interval=0.005
        )
        bob = submit(pool, shares, gates, "bob", "bob0")
        wait_until(
            lambda: shares.waiting() == {"ann": 3, "bob": 1}, 10, "bob waits", interval=0.005
        )

        gates.open(gates.started[0])

        wait_until(lambda: len(gates.started) == 3, 10, "the freed slot is taken", interval=0.005)
        assert gates.started[2] == "bob0"
        assert shares.held() == {"ann": 1, "bob": 1}
        gates.open("bob0")
        assert bob.result(10) == "read bob0"
        for name in [f"ann{n}" for n in range(5)]:
            gates.open(name)
        assert sorted(f.result(10) for f in ann) == [f"read ann{n}" for n in range(5)]
    assert shares.held() == {} and shares.waiting() == {}


def test_a_user_alone_uses_every_slot(gates):
    shares = FairParsers(InlineParsers(), slots=3, queue_seconds=30)
    with ThreadPoolExecutor(max_workers=4) as pool:
        jobs = [submit(pool, shares, gates, "ann", f"ann{n}") for n in range(4)]
        wait_until(
            lambda: shares.waiting() == {"ann": 1}, 10, "ann's fourth job waits", interval=0.005
        )
        assert shares.held() == {"ann": 3}
        for name in [f"ann{n}" for n in range(4)]:
            gates.open(name)
        assert [f.result(10) for f in jobs] == [f"read ann{n}" for n in range(4)]


def test_a_job_that_waits_past_the_queue_bound_is_refused_with_a_sentence(gates):
    shares = FairParsers(InlineParsers(), slots=1, queue_seconds=0.2)
    with ThreadPoolExecutor(max_workers=2) as pool:
        holding = submit(pool, shares, gates, "ann", "ann0")
        wait_until(lambda: shares.held() == {"ann": 1}, 10, "ann holds the slot", interval=0.005)
        with acting_for("bob"), pytest.raises(ParsersBusy) as refused:
            shares.run(gates.job, "bob0", signal=Signal.after(30), what="report.pdf")
        assert refused.value.message == (
            "Lookout's readers were busy with other people's pages and files, so report.pdf "
            "was not read. Try again in a minute."
        )
        assert "bob0" not in gates.started and shares.waiting() == {}
        gates.open("ann0")
        assert holding.result(10) == "read ann0"


def test_a_stop_while_waiting_raises_cancelled_and_leaves_the_queue(gates):
    shares = FairParsers(InlineParsers(), slots=1, queue_seconds=30)
    signal = Signal()
    with ThreadPoolExecutor(max_workers=2) as pool:
        holding = submit(pool, shares, gates, "ann", "ann0")
        wait_until(lambda: shares.held() == {"ann": 1}, 10, "ann holds the slot", interval=0.005)

        def wait_as_bob() -> str:
            with acting_for("bob"):
                return shares.run(gates.job, "bob0", signal=signal, what="bob0")

        waiting: Future = pool.submit(wait_as_bob)
        wait_until(lambda: shares.waiting() == {"bob": 1}, 10, "bob waits", interval=0.005)
        signal.cancel()
        with pytest.raises(Cancelled):
            waiting.result(10)
        assert shares.waiting() == {} and "bob0" not in gates.started
        gates.open("ann0")
        holding.result(10)

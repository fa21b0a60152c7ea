"""Parser processes: jobs run under OS limits, are killed on a stop, and never stall the caller."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psutil
import pytest

from tests.support.processes import joined
from tests.support.ticker import Ticker
from tools import parsers
from tools.api import Cancelled, IngestError, Signal
from tools.parsers import (
    InlineParsers,
    ParserLimits,
    ParserPool,
    ParseTimeout,
    ParseTooLarge,
    cut_output,
)


def spin() -> None:
    while True:
        pass


def spin_for(cpu_seconds: float) -> str:
    started = time.process_time()
    while time.process_time() - started < cpu_seconds:
        pass
    return "done"


def hog_memory() -> None:
    blocks = []
    while True:
        blocks.append(bytearray(50_000_000))


def refuse(message: str) -> None:
    raise IngestError(message)


def echo(value: object) -> object:
    return value


def die() -> None:
    os._exit(3)


@dataclass(frozen=True)
class Text:
    title: str
    text: str


def make_text(size: int) -> Text:
    return Text(title="short", text="x" * size)


@pytest.fixture(scope="module")
def pool() -> Iterator[ParserPool]:
    parsers = ParserPool(ParserLimits(processes=2, cpu_seconds=1, memory_bytes=512 << 20))
    yield parsers
    parsers.close()


def test_a_job_runs_in_another_process_and_its_result_comes_back(pool):
    assert pool.run(echo, {"a": [1, 2]}, signal=Signal(), what="x") == {"a": [1, 2]}
    assert pool.pids() and os.getpid() not in pool.pids()


def test_a_job_that_spins_is_stopped_by_its_cpu_limit_with_a_sentence_and_no_stall(pool):
    with Ticker() as ticker:
        with pytest.raises(ParseTimeout) as error:
            pool.run(spin, signal=Signal.after(30), what="https://example.com/page")
    assert error.value.message == "Reading https://example.com/page took longer than 1 second."
    assert ticker.longest < 0.5
    assert pool.run(echo, "next", signal=Signal(), what="x") == "next"  # replaced


def test_a_job_gets_exactly_its_cpu_seconds_not_up_to_the_next_whole_second(pool):
    """RLIMIT_CPU counts whole seconds of the process's life, so a job with a one-second limit
    could run for almost two: a page measured at 1.7 CPU seconds was read whole."""
    assert pool.run(spin_for, 0.5, signal=Signal.after(30), what="x") == "done"
    with pytest.raises(ParseTimeout):
        pool.run(spin_for, 1.3, signal=Signal.after(30), what="x")
    assert pool.run(spin_for, 0.5, signal=Signal.after(30), what="x") == "done"  # re-armed


def test_a_job_that_needs_too_much_memory_is_refused_with_a_sentence():
    """Filling half a gigabyte costs CPU time too (the kernel's page faults, more on a machine
    short of memory): with the shared pool's one second, the CPU limit could end the job first."""
    parsers = ParserPool(ParserLimits(processes=1, cpu_seconds=60, memory_bytes=512 << 20))
    try:
        before = psutil.Process().memory_info().rss
        with pytest.raises(ParseTooLarge) as error:
            parsers.run(hog_memory, signal=Signal.after(60), what="report.pdf")
        assert error.value.message == (
            "report.pdf is too large to read: it needs more than 512 MB of memory."
        )
        assert psutil.Process().memory_info().rss - before < 100 << 20
        assert parsers.run(echo, "next", signal=Signal(), what="x") == "next"  # replaced
    finally:
        parsers.close()


def gone(pid: int) -> bool:
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("stop", ["cancel", "deadline"])
def test_a_stop_kills_the_job_process_within_half_a_second(stop):
    parsers = ParserPool(ParserLimits(processes=1, cpu_seconds=60))
    try:
        parsers.run(echo, "warm", signal=Signal(), what="x")
        (pid,) = parsers.pids()
        signal = Signal() if stop == "cancel" else Signal.after(0.5)
        if stop == "cancel":
            threading.Timer(0.5, signal.cancel).start()
        with pytest.raises(Cancelled):
            parsers.run(spin, signal=signal, what="x")
        stopped = time.monotonic()
        while not gone(pid) and time.monotonic() - stopped < 0.5:
            time.sleep(0.01)
        assert gone(pid)
        assert parsers.run(echo, "again", signal=Signal(), what="x") == "again"
        assert parsers.pids() != [pid]
    finally:
        parsers.close()


def test_what_the_job_raises_is_raised_to_the_caller(pool):
    with pytest.raises(IngestError) as error:
        pool.run(refuse, "The PDF is encrypted.", signal=Signal(), what="x")
    assert error.value.message == "The PDF is encrypted."


def test_a_process_that_dies_is_a_sentence_and_is_replaced(pool):
    with pytest.raises(Exception) as error:
        pool.run(die, signal=Signal(), what="page.html")
    assert "Reading page.html failed" in str(error.value)
    assert pool.run(echo, 1, signal=Signal(), what="x") == 1


def test_text_past_the_character_limit_is_cut_and_says_so():
    parsers = ParserPool(ParserLimits(processes=1, max_chars=1000))
    try:
        result = parsers.run(make_text, 5000, signal=Signal(), what="x")
    finally:
        parsers.close()
    assert result.title == "short"
    assert result.text.startswith("x" * 1000)
    assert result.text[1000:] == (
        "\n\n[Lookout stopped reading here: the text is longer than 1,000 characters.]"
    )


def test_inline_parsers_cut_text_the_same_way():
    assert cut_output("y" * 20, 10) == InlineParsers(10).run(
        echo, "y" * 20, signal=Signal(), what="x"
    )


def test_jobs_run_side_by_side_up_to_the_pool_size(pool):
    results: list[object] = []
    threads = [
        threading.Thread(
            target=lambda i=i: results.append(pool.run(echo, i, signal=Signal(), what="x"))
        )
        for i in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        joined(thread, "a job's thread")
    assert sorted(results) == list(range(6))


def test_a_pool_closed_while_it_warms_up_raises_nothing_and_logs_no_traceback(monkeypatch, caplog):
    """Regression: stopping ./run right after it started printed a traceback, the parser pool
    warming up while the worker stopped, and Celery logged it a character per line."""
    escaped: list[object] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    parsers = ParserPool(ParserLimits(processes=1))
    parsers.close()
    joined(parsers.warm(), "the warm-up")
    assert escaped == []
    assert not [r for r in caplog.records if r.exc_info or r.levelname == "WARNING"]


def test_a_dead_process_folder_of_another_machine_in_a_shared_tmp_is_left_alone(
    monkeypatch, tmp_path
):
    """Regression: a worker removed every parser folder whose pid was not alive on its own
    machine, so a /tmp shared between machines or containers (whose pids are their own) lost
    another's folders while its parser processes worked in them."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ended = subprocess.Popen(["true"])
    ended.wait()
    dead, machine = ended.pid, parsers._MACHINE
    names = {
        "ours, dead": f"lookout-parser-{dead}-on-{machine}-a1",
        "ours, alive": f"lookout-parser-{os.getpid()}-on-{machine}-b2",
        "before machines were named, dead": f"lookout-parser-{dead}-c3",
        "another machine's": f"lookout-parser-{dead}-on-{machine}x-d4",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
    parsers._remove_stale_workdirs()
    assert sorted(os.listdir(tmp_path)) == sorted(
        [names["ours, alive"], names["another machine's"]]
    )

"""Deadlines: one thread per process trips every signal's, sooner ones first, ended ones never."""

from __future__ import annotations

import logging
import os
import threading
import time

from tools.api import Signal


def test_many_deadlines_share_one_thread_and_each_runs_its_callbacks():
    before = threading.active_count()
    fired: list[int] = []
    all_fired = threading.Event()

    def fire(i: int) -> None:
        fired.append(i)
        if len(fired) == 50:
            all_fired.set()

    signals = [Signal.after(0.05 + i / 1000) for i in range(50)]
    for i, signal in enumerate(signals):
        signal.on_cancel(lambda i=i: fire(i))
    assert threading.active_count() <= before + 1
    # The callbacks run just after each signal is set: wait for them, not for a while (a
    # sleep was too short on a busy machine).
    assert all_fired.wait(5), fired
    assert sorted(fired) == list(range(50))
    assert all(signal.wait(0) for signal in signals)
    assert all(signal.timed_out for signal in signals)


def test_a_sooner_deadline_armed_later_trips_first():
    later, sooner = Signal.after(30), Signal.after(0.05)
    later_fired, sooner_fired = threading.Event(), threading.Event()
    undo = later.on_cancel(later_fired.set)
    sooner.on_cancel(sooner_fired.set)
    assert sooner_fired.wait(2), "the thread slept until the later deadline"
    assert not later_fired.is_set()
    undo()


def test_an_undone_callback_never_runs_but_the_deadline_still_passes():
    signal = Signal.after(0.05)
    calls: list[str] = []
    undo = signal.on_cancel(lambda: calls.append("late"))
    undo()
    time.sleep(0.15)
    assert calls == [] and signal.timed_out and signal.remaining() == 0


def test_a_cancelled_signal_never_runs_a_callback_at_its_deadline():
    signal = Signal.after(0.05)
    calls: list[str] = []
    signal.on_cancel(lambda: calls.append(signal.reason or ""))
    signal.cancel()
    time.sleep(0.15)
    assert calls == ["cancelled"] and not signal.timed_out


def test_a_callback_added_after_the_thread_dropped_the_signal_runs_at_the_deadline():
    """The thread drops a signal whose callbacks were all undone when it reaches the heap's
    top; a callback added after that must arm the deadline again."""
    idle, sooner = Signal.after(0.3), Signal.after(0.05)
    idle.on_cancel(lambda: None)()
    sooner_fired = threading.Event()
    sooner.on_cancel(sooner_fired.set)
    assert sooner_fired.wait(2)
    time.sleep(0.02)  # the thread drops the idle signal right after the sooner one's trip
    fired = threading.Event()
    idle.on_cancel(fired.set)
    assert fired.wait(2) and idle.timed_out


def test_a_forked_child_trips_its_own_deadlines():
    """A child after fork inherits no thread: without a fresh heap and thread of its own, a
    deadline armed in the child never ran its callbacks."""
    parent_signal = Signal.after(30)
    undo = parent_signal.on_cancel(lambda: None)  # the parent's thread runs
    pid = os.fork()
    if pid == 0:  # the child: report through the exit code, never through pytest
        code = 1
        try:
            fired = threading.Event()
            Signal.after(0.05).on_cancel(fired.set)
            code = 0 if fired.wait(5) else 2
        finally:
            os._exit(code)
    undo()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_callback_raising_system_exit_leaves_the_deadlines_running(caplog):
    """Regression: a callback raising an exception that is not an Exception (SystemExit,
    KeyboardInterrupt) ended the one deadline thread, and no deadline tripped again in that
    process: a hung tool call ran past its limit for good."""

    def leave() -> None:
        raise SystemExit(1)

    failing, later = Signal.after(0.05), Signal.after(0.1)
    after_it, later_fired = threading.Event(), threading.Event()
    failing.on_cancel(leave)
    failing.on_cancel(after_it.set)
    with caplog.at_level(logging.ERROR, "lookout.tools"):
        later.on_cancel(later_fired.set)
        assert later_fired.wait(5), "the deadline thread ended with the failing callback"
    assert after_it.is_set(), "the failing callback stopped the signal's other callbacks"
    assert failing.timed_out and later.timed_out
    assert "signal callback failed" in caplog.messages
    fired = threading.Event()
    Signal.after(0.05).on_cancel(fired.set)
    assert fired.wait(5), "no deadline trips after the failure"

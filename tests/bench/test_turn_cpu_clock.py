"""bench.turn_cpu's process CPU: every thread's, the ended ones included, finer than a tick."""

import threading
import time

import psutil

from bench.turn_cpu import process_cpu_seconds


def test_a_thread_that_ended_is_counted_in_its_process():
    spent: list[float] = []

    def busy() -> None:
        started = time.thread_time()
        sum(i * i for i in range(300_000))
        spent.append(time.thread_time() - started)

    process = psutil.Process()
    before = process_cpu_seconds(process)
    worker = threading.Thread(target=busy)
    worker.start()
    worker.join()  # ended: /proc/PID/task no longer lists it
    after = process_cpu_seconds(process)
    assert after - before >= spent[0] > 0


def test_the_clock_reads_finer_than_ten_millisecond_ticks():
    """Each read costs the process some µs of CPU: ticks would repeat one or two values."""
    process = psutil.Process()
    readings = {process_cpu_seconds(process) for _ in range(50)}
    assert len(readings) > 10

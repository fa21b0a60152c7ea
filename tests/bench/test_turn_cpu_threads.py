"""bench.turn_cpu --threads: the worker's CPU per turn by thread, as the kernel counts it."""

import os
import threading

from bench.turn_cpu import thread_cpu, thread_ms


def test_each_thread_is_counted_with_the_main_thread_marked():
    done, hold = threading.Event(), threading.Event()
    ids: list[int] = []

    def busy() -> None:
        ids.append(threading.get_native_id())
        sum(i * i for i in range(300_000))  # some CPU of this thread's own
        done.set()
        hold.wait()  # alive while it is counted: an ended thread leaves /proc

    before = thread_cpu(os.getpid())
    assert os.getpid() in before  # the main thread's id is the process's
    worker = threading.Thread(target=busy)
    worker.start()
    try:
        assert done.wait(60)
        sum(i * i for i in range(300_000))  # and some of the main thread's
        spent = dict(part.split() for part in thread_ms(os.getpid(), before, 2).split(", "))
    finally:
        hold.set()
        worker.join()
    assert float(spent[str(ids[0])]) > 0
    assert float(spent["main"]) > 0

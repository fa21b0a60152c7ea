"""bench.core_scaling: the CPUs a run is given, and a process's GIL share read from py-spy."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.core_scaling import GilShare, cpu_list, gil_report, gil_samples, run_queue_ns
from bench.load_parts import users_of

PY_SPY = shutil.which("py-spy") or next(Path("/tmp").glob("pyspy_*/bin/py-spy"), None)


def test_cpus_are_read_as_taskset_writes_them():
    assert cpu_list("0") == [0]
    assert cpu_list("0,1") == [0, 1]
    assert cpu_list("0-3,6") == [0, 1, 2, 3, 6]


def test_the_user_count_is_read_from_the_load_s_flags():
    assert users_of(["--users", "500", "--minutes", "1"]) == 500
    assert users_of(["--minutes", "1"]) is None
    assert users_of(["--users"]) is None


def test_a_process_s_ceiling_is_the_run_s_rate_over_its_share_of_the_gil():
    """A worker that held its GIL a quarter of the time at 300 turns a minute would hold it
    all the time at 1,200: 50 ms of GIL a turn."""
    share = GilShare("worker 1", 1, 251, 30.0, 9.0, 150, 600, lagging=False, waiting=0.5)
    report = gil_report([share], per_minute=300.0, py_spy_cpu=1.0)
    row = next(line for line in report.splitlines() if line.startswith("| worker 1"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:] == ["251", "0.30", "0.25", "60.0", "50.0", "1,200", "0.50"]


@pytest.mark.skipif(PY_SPY is None, reason="py-spy is not installed")
@pytest.mark.parametrize(
    ("body", "low", "high"),
    [
        ("while True: pass", 0.8, 1.0),  # one thread that never lets go of the GIL
        ("import time; time.sleep(60)", 0.0, 0.05),  # one that waits without it
    ],
)
def test_py_spy_s_gil_samples_count_the_time_a_thread_holds_the_gil(body, low, high):
    process = subprocess.Popen([sys.executable, "-c", body])
    try:
        subprocess.run([sys.executable, "-c", "import time; time.sleep(0.5)"], check=True)
        held, _ = gil_samples(str(PY_SPY), process.pid, rate=20, seconds=2)
    finally:
        process.kill()
        process.wait()
    assert low * 40 <= held <= high * 40


def test_a_process_s_threads_time_on_a_core_and_in_the_run_queue_are_read():
    ran, waited = run_queue_ns(os.getpid())
    spun = time.thread_time() + 0.05
    while time.thread_time() < spun:  # 50 ms on a core, however busy the machine
        sum(range(10_000))
    # The kernel adds a running thread's time at a tick or a switch: a sleep is a switch (the
    # sum alone, some 3 ms, read the same run time before and after in a full run).
    time.sleep(0.01)
    ran_after, waited_after = run_queue_ns(os.getpid())
    assert ran_after > ran and waited_after >= waited
    assert run_queue_ns(2**22 + 1) == (0, 0)  # a process that is not there

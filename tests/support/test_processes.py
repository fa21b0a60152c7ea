"""Processes a killed run left behind are stopped by the next run; a live run keeps its own."""

from __future__ import annotations

import subprocess
import sys

from tests.support.processes import (
    ROOT,
    alive,
    start_process,
    stop_orphans,
    stop_process,
    wait_until,
)

# A test process killed outright: it starts a server and ends without stopping it.
KILLED_RUN = """
import os, sys
from pathlib import Path
from tests.support.processes import start_process
server = start_process(["sleep", "120"], Path(sys.argv[1]))
print(server.pid, flush=True)
os._exit(0)
"""


def test_a_killed_runs_processes_are_stopped_and_a_live_runs_are_not(tmp_path):
    ran = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, str(tmp_path / "left.log")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    left = int(ran.stdout)
    mine = start_process(["sleep", "120"], tmp_path / "mine.log")
    try:
        assert alive(left)
        assert stop_orphans() >= 1
        wait_until(lambda: not alive(left), 5, f"process {left} of the killed run is still there")
        assert alive(mine.pid)
    finally:
        stop_process(mine)

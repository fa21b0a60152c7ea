"""gunicorn's settings module for ./run (``--config python:webapp.gunicorn_conf``): metrics upkeep.

With ``PROMETHEUS_MULTIPROC_DIR`` each web worker keeps its metrics in files there; the open
event streams of a worker that exited closed with it, so its live gauges must stop counting.
"""

from __future__ import annotations

from prometheus_client import multiprocess

from core.config import load_settings


def child_exit(server, worker) -> None:
    """Forget the live gauges of a web worker that exited (gunicorn calls this in the master)."""
    path = load_settings()["PROMETHEUS_MULTIPROC_DIR"]
    if path:
        multiprocess.mark_process_dead(worker.pid, path)

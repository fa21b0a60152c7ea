"""gunicorn's settings module for ./run (``--config python:webapp.gunicorn_conf``): metrics
upkeep, and each web worker's loaded app left out of the cycle collector's walks.

With ``PROMETHEUS_MULTIPROC_DIR`` each web worker keeps its metrics in files there; the open
event streams of a worker that exited closed with it, so its live gauges must stop counting.
"""

from __future__ import annotations

import gc

from prometheus_client import multiprocess

from core.config import load_settings


def child_exit(server, worker) -> None:
    """Forget the live gauges of a web worker that exited (gunicorn calls this in the master)."""
    path = load_settings()["PROMETHEUS_MULTIPROC_DIR"]
    if path:
        multiprocess.mark_process_dead(worker.pid, path)


def post_worker_init(worker) -> None:
    """Leave what a web worker loaded with its app (modules, Flask's, SQLAlchemy's and
    marshmallow's objects) out of the cycle collector's walks, as a Celery worker does once
    ready (``workers.runtime.freeze_loaded``): they live as long as the process, and every
    full collection walked them all. gunicorn calls this in the worker, its app loaded (each
    worker loads its own: no ``--preload``)."""
    gc.collect()  # the start-up's garbage first, which a freeze would keep for good
    gc.freeze()

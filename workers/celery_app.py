"""The workers' Celery app, configured from celeryconfig.py; tasks run in a Flask app context."""

from __future__ import annotations

import threading

from celery import Celery, Task
from flask import Flask

# Modules whose tasks the worker registers; add new task modules here.
TASK_MODULES = [
    "workers.health",
    "workers.steps",
    "workers.toolcalls",
    "workers.reaper",
    "workers.admin_tasks",
    "workers.mcp_listing",
    "workers.user_tools",
]

_app_lock = threading.Lock()
_flask_app: Flask | None = None


def get_flask_app() -> Flask:
    """Return this process's Flask app, created on first use (once per worker process)."""
    global _flask_app
    if _flask_app is None:
        with _app_lock:
            if _flask_app is None:
                from core.app import create_app

                _flask_app = create_app()
    return _flask_app


class AppContextTask(Task):
    """A task that runs inside the Flask app's context, so models and settings work; a base
    that does more around the body extends ``run_in_context``, inside the one context."""

    abstract = True

    def __call__(self, *args, **kwargs):
        with get_flask_app().app_context():
            return self.run_in_context(*args, **kwargs)

    def run_in_context(self, *args, **kwargs):
        """Run the task's body and return its result; called inside the app context."""
        return super().__call__(*args, **kwargs)


def make_celery() -> Celery:
    """Return the workers' Celery app."""
    from workers import ping_logs, redis_reconnect
    from workers.abandoned import install

    redis_reconnect.install()
    ping_logs.install()
    app = Celery("lookout", task_cls=AppContextTask, include=TASK_MODULES)
    app.config_from_object("celeryconfig")
    install(app)
    return app


celery = make_celery()

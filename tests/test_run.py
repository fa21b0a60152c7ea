"""./run serves, refuses bad settings, fails on no tests, and leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import uuid

import pytest
import requests

from core.config import SETTINGS
from tests.support.processes import (
    ROOT,
    alive,
    descendants,
    free_port,
    start_process,
    stop_process,
    wait_until,
)

pytestmark = pytest.mark.integration


def run_environ(tmp_path, **settings) -> dict[str, str]:
    """Return this environment without Lookout settings, plus the given ones."""
    env = {key: value for key, value in os.environ.items()}
    for setting in SETTINGS:
        env.pop(setting.name, None)
    env.update(
        SECRET_KEY="run-test",
        DATABASE_URL=f"sqlite:///{tmp_path}/run.db",
        CELERY_QUEUE=f"lookout-run-{uuid.uuid4().hex[:8]}",
        WORKER_CONCURRENCY="4",
    )
    env.update(settings)
    return env


def healthy(url: str) -> bool:
    """Return whether /healthz answers 200."""
    try:
        return requests.get(url + "/healthz", timeout=5).status_code == 200
    except requests.RequestException:
        return False


def assert_first_password_printed_last(log) -> None:
    """The admin's first password comes after the services' start-up logs, framed, with the
    command that sets a new one.

    Regression: it was printed before the worker and web server started, and scrolled away
    under their logs, with no word on how to reset it.
    """
    rule = "=" * 78
    wait_until(lambda: log.read_text().count(rule) == 2, 30, f"no framed password in {log}")
    text = log.read_text()
    start, end = text.index(rule), text.rindex(rule)
    frame = text[start:end]
    assert "Created the admin account 'admin' with password " in frame
    assert "To set a new password later: flask --app webapp users set-password admin" in frame
    # Regression: a newcomer pasting that line got "flask: command not found".
    assert "(flask is in .venv/bin: run 'source .venv/bin/activate' first.)" in frame
    assert "Listening at" in text[:start]  # gunicorn is up
    assert re.search(r"celery@\S+ ready", text[:start])  # and the worker
    assert "Lookout is at http://127.0.0.1:" in text[:start]
    assert "Created the admin account" not in text[:start]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_run_serves_and_stops_every_child_on_a_signal(tmp_path, signum):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "run.log"
    # No REDIS_URL: ./run starts (and must stop) its own Redis too.
    env = run_environ(tmp_path, HOST="127.0.0.1", PORT=str(port))
    process = start_process([str(ROOT / "run")], log, env=env)
    children: set[int] = set()
    try:
        wait_until(
            lambda: process.poll() is not None or healthy(url),
            90,
            f"./run did not become healthy; see {log}",
        )
        assert process.poll() is None, log.read_text()
        page = requests.get(url + "/sign-in", timeout=5)
        assert page.status_code == 200 and "Sign in" in page.text
        assert_first_password_printed_last(log)
        children = descendants(process.pid)
        assert len(children) >= 4, children  # redis, celery, gunicorn master and workers

        process.send_signal(signum)
        process.wait(40)
        wait_until(
            lambda: not any(alive(pid) for pid in children),
            10,
            f"./run left processes behind: {[p for p in children if alive(p)]}",
        )
    finally:
        for pid in children:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        stop_process(process, timeout=5)
    assert not list((ROOT / "var").glob("run.*/redis.log")), "./run left its files in var/"


def test_run_refuses_an_invalid_setting_with_a_sentence(tmp_path):
    result = subprocess.run(
        [str(ROOT / "run")],
        cwd=ROOT,
        env=run_environ(tmp_path, PORT="abc"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "PORT must be a whole number between 1 and 65535, not 'abc'." in result.stderr


def test_run_test_fails_when_no_test_is_collected(tmp_path, redis_url):
    env = run_environ(tmp_path, REDIS_URL=redis_url)
    result = subprocess.run(
        [
            str(ROOT / "run"),
            "test",
            "-q",
            "-k",
            "no_test_has_this_name",
            "tests/webapp/test_config.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "pytest collected no tests: that counts as a failure" in result.stderr

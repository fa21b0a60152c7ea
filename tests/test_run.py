"""./run serves, refuses bad settings, fails on no tests, and leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import uuid
from collections.abc import Collection

import psutil
import pytest
import requests
from celery import Celery
from celery.utils.nodenames import host_format

from core.broker import PING, client_settings
from core.config import SETTINGS, usable_cpus
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


def assert_first_password_printed_last(log, workers: int) -> None:
    """The admin's first password comes after the services' start-up logs (every one of the
    ``workers`` worker processes ready), framed, with the command that sets a new one.

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
    # and every worker process, each under a node name of its own
    ready = re.findall(r"(worker\d+-\d+@\S+) ready", text[:start])
    assert len(set(ready)) == len(ready) == workers, ready
    assert "Lookout is at http://127.0.0.1:" in text[:start]
    assert "Created the admin account" not in text[:start]


def stop_run(process, signum: int, pids: Collection[int]) -> None:
    """Send ./run ``signum``, wait until it exits, and check that none of ``pids`` outlived it."""
    process.send_signal(signum)
    process.wait(40)
    wait_until(
        lambda: not any(alive(pid) for pid in pids),
        10,
        f"./run left processes behind: {[p for p in pids if alive(p)]}",
    )


def kill_left(process, pids: Collection[int]) -> None:
    """Kill what a failed test left: any of ``pids`` still alive, and ./run's group."""
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    stop_process(process, timeout=5)


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
        # WORKER_CONCURRENCY is 4: a worker process per CPU, at most 4
        assert_first_password_printed_last(log, workers=min(usable_cpus(), 4))
        children = descendants(process.pid)
        assert len(children) >= 4, children  # redis, celery, gunicorn master and workers

        stop_run(process, signum, children)
    finally:
        kill_left(process, children)
    assert not list((ROOT / "var").glob("run.*/redis.log")), "./run left its files in var/"


def worker_nodes(run_pid: int) -> dict[int, tuple[str, str]]:
    """Return ./run's Celery worker processes: pid -> (node name as given, threads)."""
    nodes = {}
    for pid in descendants(run_pid):
        try:
            args = psutil.Process(pid).cmdline()
        except psutil.NoSuchProcess:
            continue
        if "celery" in " ".join(args[:3]) and "worker" in args:
            nodes[pid] = (args[args.index("--hostname") + 1], args[args.index("--concurrency") + 1])
    return nodes


def test_run_starts_worker_processes_that_each_take_tasks_and_all_stop(tmp_path, redis_url):
    """WORKER_PROCESSES=2 starts two worker processes sharing WORKER_CONCURRENCY, each a node
    of its own consuming the queue; stopping ./run stops both."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "run.log"
    env = run_environ(
        tmp_path, HOST="127.0.0.1", PORT=str(port), REDIS_URL=redis_url,
        WORKER_PROCESSES="2", WORKER_CONCURRENCY="5",
    )  # fmt: skip
    queue = env["CELERY_QUEUE"]
    client = Celery("run-test", set_as_current=False)
    client.conf.update(client_settings({"REDIS_URL": redis_url, "CELERY_QUEUE": queue}))
    process = start_process([str(ROOT / "run")], log, env=env)
    workers: dict[int, tuple[str, str]] = {}
    try:
        wait_until(
            lambda: process.poll() is not None or "Lookout is at" in log.read_text(),
            120,
            f"./run did not start; see {log}",
        )
        assert process.poll() is None, log.read_text()
        assert "run: started 2 worker processes (3+2 threads)" in log.read_text()
        assert_first_password_printed_last(log, workers=2)
        workers = worker_nodes(process.pid)
        names = sorted(name for name, _ in workers.values())
        assert names == [f"worker1-{port}@%h", f"worker2-{port}@%h"], workers
        assert sorted(threads for _, threads in workers.values()) == ["2", "3"]
        assert healthy(url)

        # Each takes tasks from the queue: with the other's consumer cancelled, a ping sent to
        # the queue can only be taken by it.
        nodes = [host_format(name) for name in names]  # as Celery names them on this host
        for other in nodes:
            client.control.cancel_consumer(queue, destination=[other], reply=True, timeout=10)
            assert client.send_task(PING, queue=queue).get(timeout=30) == "pong"
            client.control.add_consumer(queue, destination=[other], reply=True, timeout=10)
        stats = client.control.inspect(destination=nodes, timeout=10).stats() or {}
        assert sorted(stats) == nodes, stats
        for node in nodes:
            assert stats[node]["total"].get(PING, 0) >= 1, (node, stats[node]["total"])

        stop_run(process, signal.SIGTERM, workers)
    finally:
        kill_left(process, workers)


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

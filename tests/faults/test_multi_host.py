"""Scale-out shown: Redis and PostgreSQL, one web process and two workers each on a host of
their own, turns with tool calls through the web host, and one worker host lost mid-turn.

The hosts are network namespaces on this machine (tests/support/hosts.py), joined by veths to a
bridge in a namespace of its own; their addresses (10.213.0.0/24) exist only inside the
namespaces the test makes. No namespace has a default route and nothing is added to the
machine's own network, so no packet leaves the machine: the hosts reach each other and their
own loopback, nothing else. Everything is removed after, also when the test fails. Each host
has its own /tmp (a tmpfs in a mount namespace of its own) and metrics folder; the test itself
(its API client, the fake model and the site the tools read) sits on a host named "lab".

Where the kernel refuses network namespaces the test is skipped with the reason, also under
CI=true; where they work, a missing tool or server fails it under CI.
"""

from __future__ import annotations

import collections
import json
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask import Flask

from core.extensions import db
from core.limits import set_overrides
from core.models import Turn, User
from tests.conftest import skip_or_fail
from tests.faults.conftest import Stopwatch, record_recovery
from tests.support import databases, hosts, postgres_server, public_addresses
from tests.support.chat import ChatClient
from tests.support.fake_model import FakeModel, Reply
from tests.support.processes import ROOT, wait_until
from tests.support.redis_server import RedisServer
from tests.support.sites import Site
from tests.support.web_process import WebProcess
from tests.support.workers import CeleryWorker
from tests.workers.conftest import private_chat
from webapp import create_app
from workers.reaper import DIED

ARTICLE = b"""<html><head><title>Lighthouses of Brittany</title></head><body><article>
<h1>Lighthouses of Brittany</h1>
<p>The Phare d'Eckmuhl stands sixty-five metres tall on the Penmarc'h peninsula.</p>
<p>It was lit in 1897 and can be climbed in summer.</p></article></body></html>"""
HELD_TURNS = 6  # three on each worker: their concurrency
CONCURRENCY = 3
ENDED = ("completed", "failed")
OPEN = ("queued", "running")


class HeldPages:
    """Serves the article under /held/N once released, noting which host asked for each."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.readers: dict[str, str] = {}  # path -> the address of the host that fetched it

    def __call__(self, request) -> None:
        self.readers[request.path] = request.client_address[0]
        self.release.wait(60)
        request.reply(200, "text/html; charset=utf-8", ARTICLE)


def answer(request: dict) -> Reply:
    """The model: fetch the URL the user gave, then say it was read."""
    last = request["messages"][-1]
    if last["role"] == "tool":
        return Reply.text("Read it: sixty-five metres.")
    url = re.search(r"http://[\d.:]+/held/\d+", json.dumps(last["content"])).group(0)
    return Reply.tool_calls([("web_fetch", {"url": url})], text="Reading. ")


@pytest.fixture
def network(tmp_path) -> Iterator[hosts.Network]:
    """The bridge the hosts join; skips where the kernel refuses network namespaces."""
    refused = hosts.refused_reason()
    if refused:
        pytest.skip(f"{refused}, so scale-out across hosts was not tested")
    missing = hosts.missing_reason() or postgres_server.missing_reason()
    if missing:
        skip_or_fail(f"{missing}, so scale-out across hosts was not tested")
    with hosts.Network(tmp_path) as made:
        yield made


def host_environ(public: list[str] = ()) -> dict[str, str]:
    """A host's own temp and metrics folders (in its own /tmp); ``public`` addresses are taken
    as public by its guarded fetch."""
    own = {"TMPDIR": "/tmp", "PROMETHEUS_MULTIPROC_DIR": "/tmp/lookout-metrics"}
    if os.environ.get("PYTHONPATH"):
        own["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return public_addresses.environ(own, list(public)) if public else own


@dataclass
class Cluster:
    """The hosts, what runs on them, and the test's own: its app, client, site and pages."""

    db: hosts.Host
    web: hosts.Host
    workers: list[hosts.Host]
    lab: hosts.Host
    app: Flask
    chat: ChatClient
    site: Site
    held: HeldPages
    processes: list[CeleryWorker]
    checkout: set[str]  # the checkout's files before any host started

    def start(self, number: int) -> tuple[str, str]:
        """Ask, in a new conversation, to read /held/``number``; return (conversation, turn)."""
        conversation = self.chat.new_conversation()
        url = self.site.url(f"/held/{number}")
        turn = self.chat.start(
            conversation, f"Read {url}", "fake/m", generation={"tools": ["web_fetch"]}
        )
        return conversation, turn["turn"]["id"]


@pytest.fixture
def cluster(network, tmp_path) -> Iterator[Cluster]:
    """Redis and PostgreSQL on "db", gunicorn on "web", a worker on "worker1" and "worker2";
    the test's thread, the fake model and the site on "lab"."""
    checkout = checkout_files()
    db_host, web_host = network.add_host("db"), network.add_host("web")
    worker_hosts = [network.add_host("worker1"), network.add_host("worker2")]
    lab = network.add_host("lab")
    with ExitStack() as stack:
        stack.enter_context(hosts.entered(lab))
        redis_server = stack.enter_context(RedisServer(db_host))
        postgres = postgres_server.PostgresServer(db_host).start()  # goes with its host
        app = create_app(
            {
                "TESTING": True,
                "SECRET_KEY": "multi-host",  # shared by every host, as a deployment must
                "DATABASE_URL": postgres.url,
                "REDIS_URL": redis_server.url,
                "CELERY_QUEUE": f"lookout-hosts-{uuid.uuid4().hex[:8]}",
                "LOOKOUT_PLUGINS": "tools.web_fetch",
                "TURN_STALE_SECONDS": 15,  # a loaded machine is not a dead worker
                "REAPER_INTERVAL_SECONDS": 1,
            }
        )
        stack.callback(_close_app, app)
        databases.migrate(app)
        site = stack.enter_context(Site(lab.address))
        site.fallback = held = HeldPages()
        fake = stack.enter_context(FakeModel(host=lab.address, responder=answer))
        web = WebProcess(app, tmp_path, host=web_host, extra_env=host_environ())
        stack.callback(web.stop)
        web.start(timeout=120)
        workers = []
        for worker_host in worker_hosts:
            environ = host_environ([lab.address])
            worker = CeleryWorker(app, tmp_path, CONCURRENCY, environ, host=worker_host)
            stack.callback(worker.stop)
            workers.append(worker.start(timeout=120))  # a loaded machine imports slowly
            wait_until(worker.answers, 60, f"no answer from the worker on {worker_host.name}")
        chat = private_chat(app, fake, web.url, "scale-out")
        with app.app_context():  # one user's turns, more than one's default allows
            user = db.session.scalar(db.select(User).filter_by(name="scale-out"))
            set_overrides(user.id, {"openTurns": 2 * HELD_TURNS})
            db.session.commit()
        yield Cluster(
            db_host, web_host, worker_hosts, lab, app, chat, site, held, workers, checkout
        )


def _close_app(app: Flask) -> None:
    app.extensions["lookout_health"].stop()
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.mark.slow
@pytest.mark.timeout(600)  # five hosts start on a loaded machine
def test_turns_run_across_hosts_and_losing_a_worker_host_leaves_every_turn_ended_and_clear(
    cluster,
):
    own_tmp = set(os.listdir(tempfile.gettempdir()))
    turns = [cluster.start(n) for n in range(HELD_TURNS)]
    held = cluster.held
    wait_until(lambda: len(held.readers) == HELD_TURNS, 90, f"fetched: {cluster.site.requests}")
    # Each worker host fetched from its own address, as many pages as it runs at once.
    fetched_by = collections.Counter(held.readers.values())
    assert fetched_by == {h.address: CONCURRENCY for h in cluster.workers}, fetched_by

    survivor, lost = cluster.workers
    clock = Stopwatch()
    lost.lose()
    held.release.set()
    turns += [cluster.start(n) for n in range(HELD_TURNS, HELD_TURNS + 2)]  # the survivor's
    ended = {turn_id: cluster.chat.wait(turn_id, timeout=90) for _, turn_id in turns}
    record_recovery("a worker host lost mid-turn (reaped)", clock.seconds())

    on_lost = {
        t for n, (_, t) in enumerate(turns) if held.readers.get(f"/held/{n}") == lost.address
    }
    for turn_id, turn in ended.items():
        if turn_id in on_lost:  # ended by the survivor's reaper, unless it sent the work again
            assert turn["status"] in ENDED, turn
            assert turn["status"] == "completed" or DIED in turn["error"], turn
        else:
            assert turn["status"] == "completed", turn
            assert cluster.chat.reply(turn)["parts"][-1]["text"] == "Read it: sixty-five metres."
    with cluster.app.app_context():
        assert db.session.scalars(db.select(Turn).filter(Turn.status.in_(OPEN))).all() == []
    # A conversation whose turn the lost host held takes its next message.
    conversation = next(c for c, t in turns if t in on_lost)
    again = cluster.chat.run(conversation, f"Read {cluster.site.url('/held/99')}", "fake/m")
    assert again["status"] == "completed", again
    assert_kept_apart(cluster, survivor, cluster.processes[0], own_tmp)
    assert checkout_files() - cluster.checkout == set()  # the checkout every host runs from


def assert_kept_apart(
    cluster: Cluster, survivor: hosts.Host, worker: CeleryWorker, own_tmp: set[str]
) -> None:
    """Each host listens on its own address alone, routes nowhere but the bridge, and keeps
    its metrics and parser folders in its own /tmp."""
    db_host, web_host = cluster.db, cluster.web
    assert db_host.listening() == {(db_host.address, 6379), (db_host.address, 5432)}
    assert web_host.listening() == {(web_host.address, 8000)}
    assert survivor.listening() == set()
    for host in [db_host, web_host, survivor, cluster.lab]:
        assert not [r for r in host.routes() if r.startswith("default")], host.name
    web_pids, survivor_pids = web_host.pids(), survivor.pids()
    assert metric_pids(web_host) & web_pids and metric_pids(survivor) & survivor_pids
    assert not metric_pids(web_host) & survivor_pids and not metric_pids(survivor) & web_pids
    # Other test runs on this machine may make parser folders in its /tmp: they name their pid.
    parsers = f"lookout-parser-{worker.process.pid}-"
    assert [n for n in os.listdir(survivor.path("/tmp")) if n.startswith(parsers)]
    new_tmp = set(os.listdir(tempfile.gettempdir())) - own_tmp
    assert not [n for n in new_tmp if n.startswith((parsers, "lookout-metrics"))]


def checkout_files() -> set[str]:
    """The checkout's files, bytecode caches aside (edits made meanwhile are not the hosts')."""
    found = set()
    for folder, names, files in os.walk(ROOT):
        names[:] = [n for n in names if n not in ("__pycache__", ".pytest_cache", ".venv")]
        found.update(str(Path(folder, name).relative_to(ROOT)) for name in files)
    return found


def metric_pids(host: hosts.Host) -> set[int]:
    """The pids named by the files in the host's metrics folder."""
    folder = host.path("/tmp/lookout-metrics")
    return {int(m.group(1)) for p in folder.iterdir() if (m := re.search(r"_(\d+)\.db$", p.name))}

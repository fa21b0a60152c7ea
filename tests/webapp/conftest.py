"""Fixtures for the chat page tests (Chromium itself is tests/conftest.py's `browser`): per
module one app (turn test plugins plus web_search on a loopback SearXNG), one worker and one
server, with a fake model and a user of each test's own."""

from __future__ import annotations

import json
import shutil
import uuid

import pytest

from core.extensions import db
from core.models import Provider
from tests.conftest import RUN_ID
from tests.support.chat import ChatClient
from tests.support.chat_page import token_for
from tests.support.live_server import LiveServer
from tests.support.sites import Site
from tests.support.workers import CeleryWorker
from webapp import create_app

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@pytest.fixture(scope="module")
def site():
    """A loopback SearXNG with two results, and an image; ``paths()`` lists what was requested."""
    with Site() as server:
        results = {
            "results": [
                {"title": "Lighthouse A", "url": "https://a.example/light", "content": "A"},
                {"title": "", "url": "https://b.example/house", "content": "B"},
            ]
        }
        server.serve("/search", "application/json", json.dumps(results).encode())
        server.serve("/cat.png", "image/png", PNG)
        yield server


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory, redis_url, sqlite_template):
    """An app with the turn test plugins and web_search, on its own database and queue."""
    path = tmp_path_factory.mktemp("chat-page") / "lookout.db"
    shutil.copyfile(sqlite_template, path)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "chat-page-tests",
            "DATABASE_URL": f"sqlite:///{path}",
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"lookout-page-{RUN_ID}-{uuid.uuid4().hex[:8]}",
            "LOOKOUT_PLUGINS": "tests.workers.turn_plugins,tools.web_search",
            "TURN_MAX_STEPS": 4,
        }
    )
    yield app
    with app.app_context():
        db.engine.dispose()


@pytest.fixture(scope="module")
def chat_server(chat_app, tmp_path_factory, site):
    """The app served over HTTP with a worker running and web_search set to the SearXNG."""
    with CeleryWorker(chat_app, tmp_path_factory.mktemp("worker"), concurrency=8):
        with LiveServer(chat_app) as server:
            admin = ChatClient(server.url, token_for(chat_app, admin=True)[1])
            admin.search_with_searxng(site.url(""))
            yield server


@pytest.fixture
def model_id(chat_app, fake_model):
    """Register the fake as a provider with one tool-capable model; return the model's id."""
    name = f"fake-{uuid.uuid4().hex[:8]}"
    with chat_app.app_context():
        db.session.add(
            Provider(name=name, base_url=fake_model.base_url, models=[{"name": "m", "tools": True}])
        )
        db.session.commit()
    return f"{name}/m"


@pytest.fixture
def user(chat_app, chat_server):
    """A new user and a ChatClient of theirs: (user, chat)."""
    person, token = token_for(chat_app)
    return person, ChatClient(chat_server.url, token)

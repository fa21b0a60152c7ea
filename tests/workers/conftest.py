"""An end-to-end chat setup shared by a module: one app, one real worker, one live server.

Each test gets its own fake model (as its own provider), user and token, so tests share
the processes but nothing they assert on.
"""

from __future__ import annotations

import shutil
import uuid

import pytest
from flask import Flask

from core.extensions import db
from core.models import ApiToken, Provider, User
from tests.conftest import RUN_ID
from tests.support.chat import ChatClient
from tests.support.fake_model import FakeModel
from tests.support.live_server import LiveServer
from tests.support.workers import CeleryWorker
from webapp import create_app

CHAT_SETTINGS = {
    "LOOKOUT_PLUGINS": "tests.workers.turn_plugins",
    "TURN_MAX_STEPS": 4,
    "CONTEXT_TOOL_CHARS": 1000,
    "TURN_STALE_SECONDS": 3,
    "REAPER_INTERVAL_SECONDS": 1,
}


def private_chat(app: Flask, fake: FakeModel, web_url: str, name: str) -> ChatClient:
    """Register ``fake`` as provider "fake" (model "fake/m", with tools) in an app of a test's
    own, and return a ChatClient for a new user ``name``."""
    with app.app_context():
        db.session.add(
            Provider(name="fake", base_url=fake.base_url, models=[{"name": "m", "tools": True}])
        )
        user = User.make(name, "password")
        db.session.add(user)
        row, token = ApiToken.make(user, "t")
        db.session.add(row)
        db.session.commit()
    return ChatClient(web_url, token)


def make_chat_app(tmp_path_factory, redis_url, sqlite_template, **settings) -> Flask:
    """Return an app for chat tests on its own migrated SQLite file and queue; ``settings``
    are added to (or replace) CHAT_SETTINGS."""
    path = tmp_path_factory.mktemp("chat") / "lookout.db"
    shutil.copyfile(sqlite_template, path)
    return create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "chat-tests",
            "DATABASE_URL": f"sqlite:///{path}",
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"lookout-chat-{RUN_ID}-{uuid.uuid4().hex[:8]}",
            **CHAT_SETTINGS,
            **settings,
        }
    )


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory, redis_url, sqlite_template):
    """An app for the module's chat tests (a module may override it with other settings)."""
    app = make_chat_app(tmp_path_factory, redis_url, sqlite_template)
    yield app
    with app.app_context():
        db.engine.dispose()


@pytest.fixture(scope="module")
def chat_worker(chat_app, tmp_path_factory):
    """A real worker process for the module's chat app."""
    with CeleryWorker(chat_app, tmp_path_factory.mktemp("worker"), concurrency=8) as worker:
        yield worker


@pytest.fixture(scope="module")
def chat_server(chat_app, chat_worker):
    """The chat app served over HTTP, with its worker running."""
    with LiveServer(chat_app) as server:
        yield server


@pytest.fixture
def model_ids(chat_app, fake_model):
    """Register the fake as a provider; return (model with tools, model without) ids."""
    name = f"fake-{uuid.uuid4().hex[:8]}"
    with chat_app.app_context():
        db.session.add(
            Provider(
                name=name,
                base_url=fake_model.base_url,
                api_key="sk-test-key",
                models=[{"name": "tooly", "tools": True}, {"name": "plain", "tools": False}],
            )
        )
        db.session.commit()
    return f"{name}/tooly", f"{name}/plain"


@pytest.fixture
def make_chat(chat_app, chat_server):
    """Return a factory of ChatClients, each a new user (admin=True for an admin)."""

    def make(admin: bool = False) -> ChatClient:
        with chat_app.app_context():
            user = User.make(f"u-{uuid.uuid4().hex[:8]}", "password", admin=admin)
            db.session.add(user)
            row, token = ApiToken.make(user, "tests")
            db.session.add(row)
            db.session.commit()
            client = ChatClient(chat_server.url, token)
            client.user_id = user.id
        return client

    return make


@pytest.fixture
def chat(make_chat):
    """A ChatClient for a new user."""
    return make_chat()

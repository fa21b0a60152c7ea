"""The provider rows a worker keeps: read once, read again after any process changes one."""

from __future__ import annotations

import uuid

import pytest

from core.extensions import db, get_redis
from core.kept import versions_read_once
from core.limits import kept_overrides
from core.models import Provider
from core.models.providers import find_kept_model
from core.plugin_host import get_host
from tests.workers.conftest import make_chat_app


@pytest.fixture
def app(tmp_path_factory, redis_url, sqlite_template):
    app = make_chat_app(tmp_path_factory, redis_url, sqlite_template)
    yield app
    with app.app_context():
        db.engine.dispose()


def add_provider(key: str) -> str:
    name = f"p-{uuid.uuid4().hex[:8]}"
    db.session.add(
        Provider(name=name, base_url="http://127.0.0.1:9/v1", api_key=key, models=[{"name": "m"}])
    )
    db.session.commit()
    return f"{name}/m"


def test_a_kept_provider_is_read_once_and_its_new_key_is_used_after_a_save(app):
    with app.app_context():
        model_id = add_provider("sk-old")
        first, _model = find_kept_model(model_id)
        db.session.commit()  # a step commits: the kept row keeps its columns
        assert find_kept_model(model_id)[0] is first
        assert first.api_key == "sk-old"
        row = db.session.scalar(db.select(Provider).filter_by(name=first.name))
        row.api_key = "sk-new"
        db.session.commit()
        assert find_kept_model(model_id)[0].api_key == "sk-new"


def test_a_provider_deleted_in_bulk_is_gone_at_the_next_read(app):
    with app.app_context():
        model_id = add_provider("sk-1")
        assert find_kept_model(model_id) is not None
        db.session.execute(db.delete(Provider).filter_by(name=model_id.split("/")[0]))
        db.session.commit()
        assert find_kept_model(model_id) is None


def test_a_change_rolled_back_leaves_the_kept_rows_alone(app):
    with app.app_context():
        model_id = add_provider("sk-1")
        first, _model = find_kept_model(model_id)
        row = db.session.scalar(db.select(Provider).filter_by(name=first.name))
        row.base_url = "http://127.0.0.1:10/v1"
        db.session.flush()
        db.session.rollback()
        db.session.commit()
        assert find_kept_model(model_id)[0] is first


def redis_calls() -> dict[str, int]:
    stats = get_redis().info("commandstats")
    return {name: stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("get", "mget")}


def test_a_step_reads_every_version_it_looks_at_in_one_round_trip(app):
    with app.app_context():
        model_id = add_provider("sk-1")
        with versions_read_once():
            before = redis_calls()
            assert find_kept_model(model_id) is not None
            get_host()
            assert kept_overrides("nobody") == {}
            after = redis_calls()
        assert after == {"get": before["get"], "mget": before["mget"] + 1}
        find_kept_model(model_id)
        assert redis_calls()["get"] == before["get"] + 1  # outside a step: a GET a look


def test_a_provider_this_step_changed_is_read_again_within_the_step(app):
    with app.app_context(), versions_read_once():
        model_id = add_provider("sk-old")
        first, _model = find_kept_model(model_id)
        row = db.session.scalar(db.select(Provider).filter_by(name=first.name))
        row.api_key = "sk-new"
        db.session.commit()
        assert find_kept_model(model_id)[0].api_key == "sk-new"

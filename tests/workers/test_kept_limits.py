"""A user's own limits (and plugin settings) as a process keeps them: read once, read again at
the very next use in every process after any process commits a change (two apps on one
database and one Redis)."""

from __future__ import annotations

import pytest

from core.extensions import db, get_redis
from core.limits import set_overrides, setting_values
from core.models import User, UserPluginSettings, UserToolSetting
from core.plugin_host import enabled_tools, find_kept_settings, get_host
from core.quotas import UserQuotas

NAMES = ("toolCallsPerStep", "fetchBytesPerDay")


@pytest.fixture
def two_apps(make_app, tmp_path, sqlite_template):
    first = make_app()
    second = make_app(DATABASE_URL=first.config["DATABASE_URL"])
    with first.app_context():
        user = User.make("limited", "password")
        db.session.add(user)
        db.session.commit()
        user_id = user.id
    return first, second, user_id


def save(app, user_id: str, values: dict[str, int | None]) -> None:
    with app.app_context():
        set_overrides(user_id, values)
        db.session.commit()


def test_a_limit_saved_in_one_process_is_used_by_another_at_its_next_call(two_apps):
    worker, web, user_id = two_apps
    with worker.app_context():
        defaults = setting_values(user_id, NAMES)
    save(web, user_id, {"toolCallsPerStep": 2, "fetchBytesPerDay": 3})
    with worker.app_context():
        assert setting_values(user_id, NAMES) == {"toolCallsPerStep": 2, "fetchBytesPerDay": 3}
        quotas = UserQuotas(get_redis(), user_id)
        assert quotas.allowed["fetchBytesPerDay"] == 3_000_000
    save(web, user_id, {"toolCallsPerStep": None})
    with worker.app_context():
        values = setting_values(user_id, NAMES)
    assert values == {"toolCallsPerStep": defaults["toolCallsPerStep"], "fetchBytesPerDay": 3}


def test_kept_limits_are_read_once_until_a_change_is_committed(two_apps):
    worker, web, user_id = two_apps
    save(web, user_id, {"toolCallsPerStep": 2})
    with worker.app_context():
        assert setting_values(user_id, NAMES)["toolCallsPerStep"] == 2
        # Written behind the ORM's back: no commit raised the version, so the kept copy holds.
        db.session.execute(db.text("UPDATE user_limits SET value = 7"))
        db.session.commit()
        assert setting_values(user_id, NAMES)["toolCallsPerStep"] == 2
    save(web, user_id, {"fetchBytesPerDay": 4})
    with worker.app_context():
        assert setting_values(user_id, NAMES) == {"toolCallsPerStep": 7, "fetchBytesPerDay": 4}


def test_a_limit_change_rolled_back_leaves_the_kept_values_alone(two_apps):
    worker, web, user_id = two_apps
    with worker.app_context():
        before = setting_values(user_id, NAMES)
        version = get_redis().get("lookout:limits:version")
    with web.app_context():
        set_overrides(user_id, {"toolCallsPerStep": 5})
        db.session.flush()
        db.session.rollback()
        db.session.commit()
        assert get_redis().get("lookout:limits:version") == version
    with worker.app_context():
        assert setting_values(user_id, NAMES) == before


def test_a_change_after_redis_restarted_empty_is_not_mistaken_for_an_old_version(two_apps):
    """A version counted up from nothing after Redis lost its keys could repeat the one a
    process kept its rows at, and the process would keep using the rows from before."""
    worker, web, user_id = two_apps
    save(web, user_id, {"toolCallsPerStep": 2})
    with worker.app_context():
        assert setting_values(user_id, NAMES)["toolCallsPerStep"] == 2
        get_redis().flushdb()  # as a Redis that keeps nothing on disk, restarted
    save(web, user_id, {"toolCallsPerStep": 3})
    with worker.app_context():
        assert setting_values(user_id, NAMES)["toolCallsPerStep"] == 3


def test_plugin_settings_saved_in_one_process_reach_another_at_its_next_tool_call(two_apps):
    """A tool call's settings (a user's own engine key, say) are kept per process like the
    limits: a change saved by the web is used by a worker's very next call, and each call gets
    a copy its tool may change without touching the next call's."""
    worker, web, user_id = two_apps
    with web.app_context():
        db.session.add(
            UserPluginSettings(user_id=user_id, plugin_id="web_search", settings={"key": "a"})
        )
        db.session.commit()
    with worker.app_context():
        first = find_kept_settings(user_id, "web_search")
        assert first == {"key": "a"}
        first["key"] = "changed by a tool"
        assert find_kept_settings(user_id, "web_search") == {"key": "a"}
    with web.app_context():
        row = db.session.get(UserPluginSettings, (user_id, "web_search"))
        row.settings = {"key": "b"}
        db.session.commit()
    with worker.app_context():
        assert find_kept_settings(user_id, "web_search") == {"key": "b"}
    with web.app_context():
        db.session.delete(db.session.get(UserPluginSettings, (user_id, "web_search")))
        db.session.commit()
    with worker.app_context():
        assert find_kept_settings(user_id, "web_search") == {}


def test_a_tool_switch_saved_in_one_process_is_used_by_another_at_its_next_step(make_app, two_apps):
    _worker, web, user_id = two_apps
    worker = make_app(
        DATABASE_URL=web.config["DATABASE_URL"], LOOKOUT_PLUGINS="tests.workers.turn_plugins"
    )

    def offered() -> list[str]:
        with worker.app_context():
            return [t.name for t in enabled_tools(get_host(), user_id)]

    assert "switchable" not in offered()  # off unless switched on
    with web.app_context():
        db.session.add(UserToolSetting(user_id=user_id, tool="switchable", enabled=True))
        db.session.commit()
    assert "switchable" in offered()
    with web.app_context():
        db.session.get(UserToolSetting, (user_id, "switchable")).enabled = False
        db.session.commit()
    assert "switchable" not in offered()

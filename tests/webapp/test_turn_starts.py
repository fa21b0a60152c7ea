"""A turn's start lock and the hour's count, taken and let go in one script each: the count is
added as the lock is let go, a refused start adds nothing, and a start waits for another."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from core import turn_starts
from core.extensions import get_redis
from core.quotas import WINDOW_SECONDS, QuotaExceeded, TurnRunning, key
from core.turn_starts import check_turn, starting
from tests.support.processes import joined
from tests.support.quotas import hold_window


@pytest.fixture
def user_id(app):
    """A user id of its own (no account is needed: nothing is open), its hour held open."""
    user = uuid.uuid4().hex
    with app.app_context():
        hold_window(get_redis(), key(user, "turnsPerHour"), WINDOW_SECONDS["hour"])
    return user


def used(user_id: str) -> int:
    return int(get_redis().get(key(user_id, "turnsPerHour")) or 0)


def test_the_hours_turn_is_counted_as_the_lock_is_let_go(app, user_id):
    with app.app_context():
        with starting(user_id) as start:
            check_turn(start)
            assert used(user_id) == 0
            assert get_redis().exists(key(user_id, "starting"))
        assert used(user_id) == 1
        assert not get_redis().exists(key(user_id, "starting"))
        with starting(user_id) as start:
            assert start.hourly_used == 1


def test_a_start_refused_over_the_hour_counts_nothing(app, user_id):
    app.config["QUOTA_TURNS_PER_HOUR"] = 1
    with app.app_context():
        with starting(user_id) as start:
            check_turn(start)
        with pytest.raises(QuotaExceeded) as refused, starting(user_id) as start:
            check_turn(start)
        assert refused.value.limit == "turnsPerHour"
        assert "this hour; you can send again at" in refused.value.message
        assert 1 <= refused.value.retry_after <= 2 * 3600  # hold_window may skip an hour
        assert used(user_id) == 1
        assert not get_redis().exists(key(user_id, "starting"))


def test_a_start_that_fails_before_its_check_counts_nothing(app, user_id):
    with app.app_context():
        with pytest.raises(TurnRunning), starting(user_id):
            raise TurnRunning()
        assert used(user_id) == 0


def test_a_start_waits_for_the_users_other_start(app, user_id):
    with app.app_context():
        waited = []
        with starting(user_id) as first:

            def second():
                with app.app_context(), starting(user_id) as start:
                    waited.append(start.hourly_used)

            thread = threading.Thread(target=second)
            thread.start()
            time.sleep(0.3)
            assert waited == []
            check_turn(first)
        joined(thread, "the second start")
        assert waited == [1]


def test_a_start_gives_up_after_waiting_its_while(app, user_id, monkeypatch):
    monkeypatch.setattr(turn_starts, "START_WAIT_SECONDS", 0.3)
    with app.app_context():
        get_redis().set(key(user_id, "starting"), "another", px=10_000)
        with pytest.raises(QuotaExceeded) as refused, starting(user_id):
            pass
        assert refused.value.message.startswith("Your other requests are still being handled.")


def test_a_lock_held_past_its_time_is_not_taken_from_its_new_holder(app, user_id):
    with app.app_context():
        with starting(user_id) as start:
            check_turn(start)
            get_redis().set(key(user_id, "starting"), "another", px=10_000)
        assert get_redis().get(key(user_id, "starting")) == b"another"
        assert used(user_id) == 1

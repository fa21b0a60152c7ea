"""Shared rate limits in a real Redis: slots booked in order, the wait, the day's cap, cancel."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import redis

from tests.support.quotas import wait_clear_of_midnight
from tools.api import Cancelled, RateLimit, RateLimited, Signal
from tools.rates import KEY_PREFIX, RedisRates, UnlimitedRates


@pytest.fixture
def client(redis_url):
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


@pytest.fixture
def bucket() -> str:
    """A bucket no other test uses (the suite shares one Redis)."""
    return f"test:{uuid.uuid4().hex}"


def test_slots_of_one_bucket_are_booked_one_interval_apart(client, bucket):
    rates = RedisRates(client)
    delays = [rates.book(bucket, RateLimit(10), longest_wait=5) for _ in range(4)]
    assert delays[0] == 0
    # Each slot comes a tenth of a second after the one before, less the moments spent booking.
    for before, after in zip(delays, delays[1:], strict=False):
        assert 0.05 < after - before <= 0.1


def test_two_buckets_do_not_share_slots(client, bucket):
    rates = RedisRates(client)
    rates.book(bucket, RateLimit(0.1), longest_wait=0)
    assert rates.book(f"{bucket}-other", RateLimit(0.1), longest_wait=0) == 0


def test_a_slot_later_than_the_call_can_wait_is_refused_and_not_booked(client, bucket):
    rates = RedisRates(client)
    rates.book(bucket, RateLimit(1), longest_wait=0)
    with pytest.raises(RateLimited) as info:
        rates.book(bucket, RateLimit(1), longest_wait=0.2)
    assert 0.2 < info.value.retry_after <= 1 and not info.value.daily
    # The refusal booked nothing: the next slot is still one interval after the first.
    assert rates.book(bucket, RateLimit(1), longest_wait=5) <= 1


def test_the_days_cap_is_counted_and_its_reset_is_midnight_utc(client, bucket):
    wait_clear_of_midnight(client)
    rates = RedisRates(client)
    limit = RateLimit(1000, per_day=2)
    rates.book(bucket, limit, longest_wait=5)
    rates.book(bucket, limit, longest_wait=5)
    with pytest.raises(RateLimited) as info:
        rates.book(bucket, limit, longest_wait=5)
    assert info.value.daily
    now = datetime.now(UTC)
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    assert abs(info.value.retry_after - (midnight - now).total_seconds()) < 5


def test_take_waits_for_the_booked_slot_and_a_cancel_ends_the_wait(client, bucket):
    rates = RedisRates(client)
    limit = RateLimit(0.1)  # one call every ten seconds
    rates.take(bucket, limit, Signal())
    signal = Signal()
    threading.Timer(0.2, signal.cancel).start()
    with pytest.raises(Cancelled):
        rates.take(bucket, limit, signal)


def test_take_refuses_a_slot_that_leaves_less_than_the_reserve_before_the_deadline(client, bucket):
    rates = RedisRates(client)
    limit = RateLimit(0.5)  # one call every two seconds
    rates.take(bucket, limit, Signal.after(10), reserve=5)
    with pytest.raises(RateLimited):
        rates.take(bucket, limit, Signal.after(6), reserve=5)
    # With time to spare, the same slot is waited for instead.
    rates.take(bucket, limit, Signal.after(10), reserve=5)


def test_bucket_names_are_kept_under_the_prefix_and_expire(client, bucket):
    RedisRates(client).book(bucket, RateLimit(1, per_day=10), longest_wait=0)
    names = sorted(n.decode() for n in client.keys(f"{KEY_PREFIX}{bucket}*"))
    assert len(names) == 2 and names[0] == f"{KEY_PREFIX}{bucket}"
    assert all(client.ttl(name) > 0 for name in names)


def test_a_context_outside_a_host_limits_nothing():
    rates = UnlimitedRates()
    assert [rates.book("any", RateLimit(0.001), 0) for _ in range(3)] == [0, 0, 0]


def test_a_bucket_that_redis_cannot_book_is_no_slot_rather_than_a_crash(bucket, caplog):
    from tests.support.processes import free_port

    unreachable = redis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.5)
    with pytest.raises(RateLimited) as info:
        RedisRates(unreachable).book(bucket, RateLimit(1), longest_wait=5)
    assert not info.value.daily
    assert f"rate bucket {bucket} could not be booked" in caplog.text

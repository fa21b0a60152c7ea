"""Shared rate limits in a real Redis: slots booked in order, the wait, the day's cap, cancel."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import redis
import requests

from tests.support.quotas import wait_clear_of_midnight
from tools.api import Cancelled, RateLimit, RateLimited, Signal
from tools.rates import KEY_PREFIX, RedisRates, UnlimitedRates, retry_after


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
    RedisRates(unreachable).hold(bucket, 30)  # the provider answers for itself next time
    assert f"rate bucket {bucket} could not be held" in caplog.text


def test_a_hold_keeps_every_slot_of_the_bucket_until_it_ends(client, bucket):
    rates = RedisRates(client)
    rates.hold(bucket, 30)
    with pytest.raises(RateLimited) as info:
        rates.book(bucket, RateLimit(10), longest_wait=5)
    assert 25 < info.value.retry_after <= 30
    assert 25 < rates.book(bucket, RateLimit(10), longest_wait=60) <= 30  # waited out
    assert rates.book(f"{bucket}-other", RateLimit(10), longest_wait=0) == 0


def test_a_shorter_hold_never_brings_a_booked_slot_sooner_and_a_longest_one_is_capped(
    client, bucket
):
    rates = RedisRates(client)
    rates.hold(bucket, 30)
    rates.hold(bucket, 1)
    with pytest.raises(RateLimited) as info:
        rates.book(bucket, RateLimit(10), longest_wait=5)
    assert info.value.retry_after > 25
    rates.hold(bucket, float("inf"))
    with pytest.raises(RateLimited) as info:
        rates.book(bucket, RateLimit(10), longest_wait=5)
    assert 3500 < info.value.retry_after <= 3600
    rates.hold(f"{bucket}-nan", float("nan"))
    assert rates.book(f"{bucket}-nan", RateLimit(10), longest_wait=0) == 0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "30"}, 30.0),
        ({"Retry-After": " 2.5 "}, 2.5),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date gone by
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-3"}, None),
        ({"retry-after-ms": "nan"}, None),
        ({"retry-after-ms": "inf"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_seconds_or_as_a_date(headers, seconds):
    assert retry_after(requests.structures.CaseInsensitiveDict(headers)) == seconds


def test_a_retry_after_date_to_come_is_the_seconds_until_it():
    when = datetime.now(UTC) + timedelta(seconds=90)
    header = when.strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert 85 < retry_after({"retry-after": header}) <= 90

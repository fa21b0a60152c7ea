"""ToolContext.meter: what a tool says it spent, kept for the host to count and counted against
the quota it draws on."""

from __future__ import annotations

import pytest

from tests.support.quotas import DayQuotas
from tools.api import QuotaUsed
from tools.quotas import FETCH_BYTES
from tools.quotas import SEARCHES as QUOTA_SEARCHES
from tools.testing import tool_context_for_test
from tools.usage import FETCHED_BYTES, PAGES_FETCHED, SEARCHES, Meter


def test_a_tool_context_for_test_has_a_meter_that_keeps_what_the_tool_counted():
    ctx, _ = tool_context_for_test()
    ctx.meter.add(SEARCHES, 1, "engine-a")
    ctx.meter.add(PAGES_FETCHED)
    ctx.meter.add(FETCHED_BYTES, 1234)
    assert ctx.meter.counts() == [
        ("searches", "engine-a", 1),
        ("pagesFetched", "", 1),
        ("fetchedBytes", "", 1234),
    ]


def test_a_metric_the_host_does_not_count_is_refused_with_the_ones_it_does():
    with pytest.raises(ValueError, match="use one of searches, pagesFetched, fetchedBytes"):
        Meter().add("tokens", 5)


def test_metered_bytes_are_counted_against_the_contexts_fetch_quota_and_nothing_else_is():
    quotas = DayQuotas({FETCH_BYTES: 10_000, QUOTA_SEARCHES: 10})
    ctx, _ = tool_context_for_test(quotas=quotas)
    ctx.meter.add(SEARCHES, 1, "engine-a")
    ctx.meter.add(PAGES_FETCHED)
    ctx.meter.add(FETCHED_BYTES, 1234)
    assert quotas.used == {FETCH_BYTES: 1234, QUOTA_SEARCHES: 0}


def test_metering_never_refuses_even_past_the_quota():
    quotas = DayQuotas({FETCH_BYTES: 100})
    ctx, _ = tool_context_for_test(quotas=quotas)
    ctx.meter.add(FETCHED_BYTES, 150)
    assert ctx.meter.counts() == [("fetchedBytes", "", 150)]
    with pytest.raises(QuotaUsed):
        ctx.quotas.check(FETCH_BYTES)

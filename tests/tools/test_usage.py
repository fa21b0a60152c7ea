"""ToolContext.meter: what a tool says it spent, kept for the host to count."""

from __future__ import annotations

import pytest

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

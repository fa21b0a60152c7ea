"""The failed-search hook of the plugin API: what a search plugin reports, the host hears, in
the fixed words of SEARCH_FAILURE_REASONS, and a failing listener never fails the plugin."""

from __future__ import annotations

import logging

import pytest

from tools.api import SEARCH_FAILURE_REASONS, on_search_failure, report_search_failure


@pytest.fixture
def heard():
    """The (engine, reason) of every failed search reported while the test runs."""
    failures: list[tuple[str, str]] = []
    remove = on_search_failure(lambda engine, reason: failures.append((engine, reason)))
    yield failures
    remove()


def test_each_reason_a_plugin_reports_is_heard_with_its_engine(heard):
    for reason in SEARCH_FAILURE_REASONS:
        report_search_failure("acme", reason)
    assert heard == [("acme", reason) for reason in SEARCH_FAILURE_REASONS]


def test_a_reason_outside_the_vocabulary_is_refused_and_never_heard(heard):
    with pytest.raises(ValueError) as refused:
        report_search_failure("acme", "Acme said: quota exceeded for key abc")
    assert "rate-limited, blocked, down, refused, error" in str(refused.value)
    with pytest.raises(ValueError, match="names the engine"):
        report_search_failure("  ", "down")
    assert heard == []


def test_a_listener_that_fails_is_logged_and_the_plugin_and_other_listeners_go_on(heard, caplog):
    def broken(engine: str, reason: str) -> None:
        raise RuntimeError("the metrics folder is gone")

    remove = on_search_failure(broken)
    try:
        report_search_failure("acme", "down")
    finally:
        remove()
    report_search_failure("acme", "blocked")
    assert heard == [("acme", "down"), ("acme", "blocked")]
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == "a listener of a failed search failed"

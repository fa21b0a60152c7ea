"""Reasoning in a model's stream: reasoning deltas, <think> text cut anywhere, and its tokens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_model import FakeModel, Reply
from workers.providers import (
    Finished,
    OpenAICompatibleProvider,
    ProviderEvent,
    ReasoningDelta,
    TextDelta,
    Usage,
)
from workers.providers.thinking import ThinkSplitter
from workers.streaming import REASONING_CUT_NOTE, keep_reasoning

HELLO = [{"role": "user", "content": "Hello"}]


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    with FakeModel() as server:
        yield server


@pytest.fixture
def provider(fake: FakeModel) -> Iterator[OpenAICompatibleProvider]:
    with OpenAICompatibleProvider("Fakery", fake.base_url, "sk-test") as client:
        yield client


def said(events: list[ProviderEvent]) -> tuple[str, str]:
    """Return (reasoning, text) of the events."""
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    return reasoning, "".join(e.text for e in events if isinstance(e, TextDelta))


def split_all(pieces: list[str]) -> tuple[str, str]:
    splitter = ThinkSplitter()
    events: list[ProviderEvent] = []
    for piece in pieces:
        events.extend(splitter.add(piece))
    events.extend(splitter.finish())
    return said(events)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_deltas_arrive_as_reasoning_before_the_text(fake, provider, field):
    fake.script(
        Reply.text("Paris.", chunks=3, reasoning="The capital? Paris.", reasoning_field=field)
    )
    events = list(provider.stream("fake-model", HELLO))
    assert said(events) == ("The capital? Paris.", "Paris.")
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_text])


def test_think_tags_cut_across_every_chunk_boundary_are_split_from_the_text(fake, provider):
    text = "<think>Let me count: 2+2.</think>It is 4."
    fake.script(Reply.text(text, chunks=len(text)))  # one character a chunk
    assert said(list(provider.stream("fake-model", HELLO))) == ("Let me count: 2+2.", "It is 4.")


@pytest.mark.parametrize("cut", range(1, 30))
def test_a_think_tag_cut_at_any_place_splits_the_same(cut):
    text = "<think>why</think>Because <b> and <thin are text"
    assert split_all([text[:cut], text[cut:]]) == ("why", "Because <b> and <thin are text")


def test_an_unclosed_think_at_the_end_is_reasoning():
    assert split_all(["Hi <think>still thinking", " and more </thi"]) == (
        "still thinking and more </thi",
        "Hi ",
    )


def test_reported_reasoning_tokens_are_counted(fake, provider):
    fake.script(Reply.text("4.", reasoning="2+2", usage=(10, 30), reasoning_tokens=25))
    events = list(provider.stream("fake-model", HELLO))
    assert events[-2:] == [Usage(10, 30, reasoning_tokens=25), Finished("stop")]


def test_reasoning_tokens_not_reported_are_estimated_within_the_answers(fake, provider):
    fake.script(Reply.text("<think>" + "x" * 400 + "</think>Done.", usage=(10, 30)))
    usage = [e for e in provider.stream("fake-model", HELLO) if isinstance(e, Usage)][0]
    assert usage == Usage(10, 30, reasoning_tokens=30)  # 100 estimated, bounded by 30 output


def test_reasoning_of_a_server_reporting_no_usage_is_estimated(fake, provider):
    fake.script(Reply.text("Done.", reasoning="y" * 40, usage=None))
    usage = [e for e in provider.stream("fake-model", HELLO) if isinstance(e, Usage)][0]
    assert usage.estimated and usage.reasoning_tokens == 10
    assert usage.output_tokens == 12  # 45 characters, reasoning and text together


def test_reasoning_past_its_room_is_cut_once_with_a_note():
    kept = keep_reasoning("", "a" * 8, 10)
    kept += keep_reasoning(kept, "b" * 8, 10)
    assert kept == "a" * 8 + "bb" + REASONING_CUT_NOTE
    assert keep_reasoning(kept, "more", 10) == ""
    assert keep_reasoning("a" * 10, "b", 10) == REASONING_CUT_NOTE  # full to the brim, then more

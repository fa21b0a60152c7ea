"""The reading card's part numbers (webapp/static/tool_cards.js), computed in Node."""

from __future__ import annotations

from tests.support.node import run_node


def part(output: dict, size: int | None = None) -> dict:
    return run_node("tool_cards.js", "readingPart", [[output, size]])[0]


def test_a_page_read_whole_is_part_1_of_1():
    assert part({"offset": 0, "totalCharacters": 300}) == {"part": 1, "of": 1}


def test_parts_that_end_early_at_line_breaks_still_count_as_whole_parts():
    # maxCharacters 10000: each part ends at the last line break in its second half
    size = 9800
    first = {"offset": 0, "nextOffset": 9800, "totalCharacters": 30000}
    second = {"offset": 9800, "nextOffset": 19500, "totalCharacters": 30000}
    last = {"offset": 19500, "totalCharacters": 30000}
    assert part(first) == {"part": 1, "of": 3}
    assert part(second, size) == {"part": 2, "of": 3}
    assert part(last, size) == {"part": 3, "of": 3}


def test_a_last_part_read_alone_says_where_it_starts_instead_of_guessing():
    assert part({"offset": 19500, "totalCharacters": 30000}) == {"part": None, "from": 19500}


def search_outcome(output: dict) -> str:
    return run_node("tool_cards.js", "searchOutcome", [[output]])[0]


def test_a_search_card_says_how_many_results_came_and_from_which_engine():
    assert search_outcome({"results": [{}], "engine": "brave", "engineName": "Brave"}) == (
        "1 result from Brave"
    )
    # Outputs stored before engines were named still read as a count.
    assert search_outcome({"results": [{}, {}]}) == "2 results"


def test_a_search_card_says_when_the_fallback_engine_answered_and_why():
    output = {
        "results": [{}, {}, {}],
        "engine": "searxng",
        "engineName": "SearXNG",
        "fallbackFrom": "Brave",
        "fallbackReason": "Brave's rate limit was reached.",
    }
    assert search_outcome(output) == (
        "3 results from SearXNG, the fallback: Brave's rate limit was reached."
    )

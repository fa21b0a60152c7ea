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

"""Follow-up questions as read from what a model wrote: plain, short, three at most."""

from __future__ import annotations

from workers.follow_ups import MAX_QUESTION_CHARS, follow_ups_asked, read_questions


def test_list_markers_and_markdown_are_stripped_and_blank_lines_skipped():
    written = "1. How **big** is it?\n\n- What is `its` history?\n* > ## Why?\n(4) Fourth?"
    assert read_questions(written) == ["How big is it?", "What is its history?", "Why?"]


def test_long_lines_and_repeats_are_dropped():
    long = "Why " + "x" * MAX_QUESTION_CHARS + "?"
    assert read_questions(f'{long}\nSame?\nSame?\n"Quoted?"') == ["Same?", "Quoted?"]


def test_markup_cannot_smuggle_a_link_or_a_tag():
    assert read_questions("[click](javascript:alert(1))?\n<img src=x>") == [
        "click(javascript:alert(1))?",
        "img src=x",
    ]


def test_follow_ups_are_asked_only_when_ticked():
    assert not follow_ups_asked({"name": "m"})
    assert not follow_ups_asked({"name": "m", "followUps": None})
    assert follow_ups_asked({"name": "m", "followUps": True})

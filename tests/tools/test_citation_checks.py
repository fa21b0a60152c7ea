"""Citation checks: each [n] of an answer against the text read for source n, as readers see it."""

import json

import pytest

from tools import citation_checks
from tools.citation_checks import CitationCheck, SourceText, check_answer
from tools.claims import passages
from tools.claims.markers import find_markers
from tools.claims.passages import SourceIndex

PAGE = (
    "# The Harrow Bridge\n\n"
    "The first bridge over the river Tamsey, a timber structure with nine spans, opened on\n"
    "2 June 1781. A flood in the winter of 1823 swept away three of its spans. The engineer\n"
    "Eleanor Marsh designed the stone bridge that replaced it, with five elliptical arches and a\n"
    "total length of 186 metres. It opened on 17 September 1829 and cost 23,400 pounds, nearly\n"
    "twice the first estimate. By 1900 a count recorded 2,300 carts and 11,000 people on a single\n"
    "market day. A restoration completed in 2016 cost 4.1 million pounds and took 26 months.\n"
    "The bridge was not damaged during the war.\n"
)


def check(answer: str, text: str = PAGE, snippet_only: bool = False) -> list[CitationCheck]:
    return check_answer(answer, {1: SourceText(1, text, snippet_only)})


def only(answer: str, text: str = PAGE, snippet_only: bool = False) -> CitationCheck:
    (result,) = check(answer, text, snippet_only)
    return result


def passage_text(result: CitationCheck, text: str = PAGE) -> str:
    return text[result.passage[0] : result.passage[1]]


def test_a_copied_sentence_is_supported_with_the_passage_it_copies():
    answer = "A flood in the winter of 1823 swept away three of its spans [1]."
    result = only(answer)
    assert result.status == "supported"
    assert passage_text(result) == "A flood in the winter of 1823 swept away three of its spans."
    assert result.missing == ()
    assert answer[result.marker[0] : result.marker[1]] == "[1]"
    assert answer[result.sentence[0] : result.sentence[1]] == answer


def test_a_paraphrase_with_the_same_facts_is_supported():
    result = only(
        "Eleanor Marsh's stone bridge is 186 metres long and has five elliptical arches [1]."
    )
    assert result.status == "supported"
    assert passage_text(result).startswith("The engineer\nEleanor Marsh designed the stone bridge")


def test_a_changed_number_is_not_supported_and_named():
    result = only("The stone bridge cost 32,400 pounds, nearly twice the first estimate [1].")
    assert result.status == "partly"
    assert result.missing == ("32,400",)


def test_a_swapped_name_is_not_supported():
    result = only("The engineer Thomas Telford designed the stone bridge that replaced it [1].")
    assert result.status == "partly"
    assert result.missing == ("Thomas Telford",)


def test_a_swapped_date_is_not_supported_in_any_format():
    assert only("The stone bridge opened on 17 September 1829 [1].").status == "supported"
    assert only("The stone bridge opened on September 17, 1829 [1].").status == "supported"
    assert only("The stone bridge opened on 1829-09-17 [1].").status == "supported"
    result = only("The stone bridge opened on September 27, 1829 [1].")
    assert (result.status, result.missing) == ("partly", ("September 27, 1829",))


@pytest.mark.parametrize(
    "claim",
    [
        "A restoration completed in 2016 cost 4,100,000 pounds [1].",
        "A restoration completed in 2016 cost 4.1 million pounds, taking twenty-six months [1].",
        "A count in 1900 recorded 2300 carts and 11 thousand people on one market day [1].",
    ],
)
def test_numbers_match_by_value_whatever_their_form(claim):
    assert only(claim).status == "supported"


def test_a_negation_the_passage_lacks_is_missing():
    result = only("A flood in the winter of 1823 did not sweep away any of its spans [1].")
    assert result.status != "supported"
    assert "not" in result.missing


def test_a_page_stored_as_json_is_read_as_its_text_with_offsets_into_the_json():
    stored = json.dumps({"url": "https://example.com/", "title": "Harrow Bridge", "text": PAGE})
    result = only("A flood in the winter of 1823 swept away three of its spans [1].", stored)
    assert result.status == "supported"
    assert passage_text(result, stored) == (
        "A flood in the winter of 1823 swept away three of its spans."
    )
    result = only("The engineer Eleanor Marsh designed the stone bridge [1].", stored)
    assert result.status == "supported"
    assert passage_text(result, stored).startswith("The engineer\\nEleanor Marsh designed")


def test_a_claim_on_another_subject_is_not_found_and_all_its_facts_are_missing():
    result = only("In 1994 quantum computers factored integers with Shor's algorithm [1].")
    assert result.status == "not_found"
    assert result.passage is None
    assert result.missing == ("1994", "Shor's")


def test_a_soft_wrapped_source_is_read_in_whole_sentences_and_acronyms_spelled_out():
    text = (
        "The European Space Agency will launch its Comet Interceptor\nspacecraft in 2029.\n\n"
        "- Orbital period: about 11,800 years\n- Speed at perihelion: 64 km per second\n"
    )
    result = only("ESA will launch Comet Interceptor in 2029 [1].", text)
    assert result.status == "supported"
    assert passage_text(result, text).endswith("Interceptor\nspacecraft in 2029.")
    result = only("Its orbital period is about 11,800 years [1].", text)
    assert passage_text(result, text) == "Orbital period: about 11,800 years"


def test_a_number_no_source_has_is_reported_as_such():
    (result,) = check("Bridges are old [999999999].")
    assert result.status == "no_such_source"
    assert result.number == 999999999


def test_a_marker_after_the_full_stop_cites_the_sentence_before_it():
    answer = "Intro here. A flood in the winter of 1823 swept away three of its spans. [1] Next."
    result = only(answer)
    assert answer[result.sentence[0] : result.sentence[1]] == (
        "A flood in the winter of 1823 swept away three of its spans."
    )
    assert result.status == "supported"


def test_each_source_of_a_claim_gets_its_own_check():
    sources = {
        1: SourceText(1, PAGE, False),
        2: SourceText(2, "Tigers are the largest living cats.", False),
    }
    results = check_answer("A flood in 1823 swept away three spans of the bridge [1][2].", sources)
    assert [(r.number, r.status) for r in results] == [(1, "supported"), (2, "not_found")]
    assert results[0].sentence == results[1].sentence


def test_markers_in_several_places_check_their_own_clause():
    answer = (
        "The stone bridge cost 23,400 pounds when it opened [1], "
        "while tigers remain the largest living cats [2]."
    )
    sources = {1: SourceText(1, PAGE, False), 2: SourceText(2, "Tigers are large cats.", False)}
    first, second = check_answer(answer, sources)
    assert answer[first.sentence[0] : first.sentence[1]].endswith("opened [1]")
    assert first.status == "supported"
    assert answer[second.sentence[0] : second.sentence[1]].startswith(", while tigers")


@pytest.mark.parametrize(
    ("answer", "numbers"),
    [
        ("a [3] b", [(3,)]),
        ("a [1][2] b", [(1,), (2,)]),
        ("a [1, 2; 4] b", [(1, 2, 4)]),
        ("a [2-4] b [5–6]", [(2, 3, 4), (5, 6)]),
        ("a [4-2] b [1-20] c", []),  # a range runs upwards over at most ten numbers
        ("see [1](https://example.com) and\n[2]: https://example.com", []),  # links
        ("code `x[1]` and ``y[2]`` here [3]", [(3,)]),
        ("```python\nx = a[1]\n```\ntext [2]\n~~~\n[3]\n", [(2,)]),  # an open fence runs on
        ("[a] [1.5] [-1] [1234567890]", []),
    ],
)
def test_marker_grammar(answer, numbers):
    assert [m.numbers for m in find_markers(answer, 200)] == numbers


def test_a_supporting_snippet_says_it_is_only_a_snippet():
    snippet = "A flood in the winter of 1823 swept away three spans of the Harrow Bridge."
    assert only("A flood in 1823 swept away three spans [1].", snippet, True).status == (
        "snippet_only"
    )
    result = only("A flood in 1825 swept away three spans [1].", snippet, True)
    assert (result.status, result.missing) == ("not_found", ("1825",))


def test_thousands_of_markers_give_at_most_the_checked_number():
    answer = "Bridges are old [1]. " * 5_000
    assert len(check(answer)) == citation_checks.MAX_CHECKS


def test_only_the_head_of_a_huge_answer_is_read():
    answer = "x" * (citation_checks.MAX_ANSWER_CHARS + 10) + " Bridges are old [1]."
    assert check(answer) == []


def test_a_huge_source_is_read_to_a_bounded_size_in_bounded_sentences():
    index = SourceIndex("bridge " * 1_000_000)
    assert len(index.text) == passages.MAX_SOURCE_CHARS
    assert len(index.spans) <= passages.MAX_SENTENCES
    assert all(end - start <= passages.MAX_SENTENCE_CHARS for start, end in index.spans)
    assert len(index.sentences_with("bridg")) <= passages.MAX_HITS


@pytest.mark.parametrize(
    "answer",
    [
        "bridge words " * 7_000 + "[1]" * 300,
        "bridge words [1] " * 5_000,
        "Bridges are old. [1] " * 4_000,
    ],
)
def test_a_long_answer_is_read_a_bounded_number_of_times(answer, monkeypatch):
    """However many markers cite one long sentence, its words are read about once."""
    read: list[int] = []
    counted = citation_checks.content_stems

    def counting(text):
        read.append(len(text))
        return counted(text)

    monkeypatch.setattr(citation_checks, "content_stems", counting)
    assert len(check(answer)) == citation_checks.MAX_CHECKS
    assert sum(read) <= 2 * len(answer)


def test_a_run_on_claim_is_looked_up_by_a_bounded_number_of_words(monkeypatch):
    looked_up: list[str] = []
    sentences_with = SourceIndex.sentences_with

    def counting(index, stem):
        looked_up.append(stem)
        return sentences_with(index, stem)

    monkeypatch.setattr(SourceIndex, "sentences_with", counting)
    answer = " ".join(f"word{n}x" for n in range(9_000)) + " [1]"
    (result,) = check(answer)
    assert len(looked_up) == citation_checks.MAX_CLAIM_STEMS
    assert result.status == "not_found"


@pytest.mark.parametrize(
    "answer",
    [
        "." * 90_000 + " [1]",
        " " * 90_000 + "[1]",
        "a." + " \n" * 40_000 + "[1]",
        "[" * 40_000 + "1]" * 10,
        "`" * 50_000 + "[1]",
        "[1 , 2 , 3" * 10_000,
    ],
)
def test_pathological_answers_are_checked_without_error(answer):
    results = check(answer)
    assert len(results) <= citation_checks.MAX_CHECKS

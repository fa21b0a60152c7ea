"""Citations: http(s) only, each URL once per reply, titles cut to 300 grapheme clusters."""

import json
from pathlib import Path

import pytest
import regex

from tools.citations import MAX_SNIPPET_CHARS, CitationList, cut_title, is_presentable_url

CASES = json.loads((Path(__file__).parents[1] / "data" / "url_cases.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["url"][:40] for c in CASES])
def test_only_http_urls_become_links(case):
    """The same cases drive the page's JavaScript predicate."""
    assert is_presentable_url(case["url"]) is case["presentable"]


def test_cite_ignores_non_http_urls_and_skips_urls_already_cited():
    citations = CitationList()
    citations.cite("https://example.com/a", "A")
    citations.cite("javascript:alert(1)", "evil")
    citations.cite("data:text/html,hi")
    citations.cite("https://example.com/a", "A again")
    citations.cite("http://example.com/b")
    assert [(c.url, c.title) for c in citations.citations] == [
        ("https://example.com/a", "A"),
        ("http://example.com/b", None),
    ]


def test_a_url_the_provider_already_cited_is_not_added_again():
    citations = CitationList(seen=["https://example.com/a"])
    assert citations.add("https://example.com/a") is None
    assert citations.citations == []


def test_titles_are_cut_to_300_grapheme_clusters_not_code_points():
    title = "e\u0301" * 400  # each cluster is two code points
    cut = cut_title(title)
    assert cut == "e\u0301" * 300


def test_titles_are_cut_to_1200_characters_at_a_cluster_boundary():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # five code points, one cluster
    assert cut_title(family * 301) == family * 240


def test_a_megabyte_title_or_cluster_is_cut_from_its_head_alone():
    """Issue 10: a 1 MB title was read whole by the grapheme regex and repeated in every part."""
    assert cut_title("word " * 200_000) == ("word " * 60).strip()
    one_cluster = "e" + "\u0301" * 1_000_000
    assert cut_title(one_cluster) == one_cluster[:1200]


def by_clusters(title: str) -> str | None:
    """The cut as the grapheme regex makes it, cluster by cluster (``cut_title``'s long way)."""
    text = " ".join(title[:4800].split())
    kept: list[str] = []
    for cluster in regex.findall(r"\X", text):
        if len(kept) == 300 or sum(map(len, kept)) + len(cluster) > 1200:
            break
        kept.append(cluster)
    return "".join(kept).rstrip() or text[:1200] or None


@pytest.mark.parametrize(
    "title",
    [
        "A page's title",
        " a  title\n\twith\u00a0odd\u2003spaces ",
        "e\u0301" * 150,
        "x" * 299 + "\u0301",
        "x" * 300,
        "x" * 301,
        "\U0001f468\u200d\U0001f469\u200d\U0001f467" * 60,
        "a" * 150 + " " * 500 + "b" * 150,
        "\u0301" * 300,
        "",
    ],
)
def test_a_short_title_is_kept_as_the_clusters_would_keep_it(title: str) -> None:
    assert cut_title(title) == by_clusters(title)


def test_a_title_of_at_most_300_characters_is_not_split_into_clusters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A title is cut three times a fetch (the page's, the call's citation, the reply's
    source): one within both limits whatever its clusters is not read by the regex."""
    import tools.citations

    splits = []
    grapheme = tools.citations._GRAPHEME

    class Counted:
        def findall(self, text: str) -> list[str]:
            splits.append(text)
            return grapheme.findall(text)

    monkeypatch.setattr(tools.citations, "_GRAPHEME", Counted())
    assert cut_title("  The Guardian: a title\nof a page ") == "The Guardian: a title of a page"
    assert cut_title("e\u0301" * 150) == "e\u0301" * 150
    assert splits == []
    assert cut_title("e\u0301" * 400) == "e\u0301" * 300
    assert len(splits) == 1


def test_blank_titles_become_none_and_whitespace_is_collapsed():
    assert cut_title("  ") is None
    assert cut_title(" A\n  title ") == "A title"


def test_each_new_citation_is_reported_once():
    seen = []
    citations = CitationList(on_add=seen.append)
    citations.cite("https://example.com/", "Home")
    citations.cite("https://example.com/", "Home")
    assert [c.url for c in seen] == ["https://example.com/"]


def test_a_snippet_is_kept_collapsed_and_cut_from_its_head_alone():
    citations = CitationList()
    citations.cite("https://a.example/", "A", "  The   snippet\n says so. ")
    citations.cite("https://b.example/", "B", "x" * 5_000_000)
    citations.cite("https://c.example/", "C", "   ")
    assert [c.snippet for c in citations.citations] == [
        "The snippet says so.",
        "x" * MAX_SNIPPET_CHARS,
        None,
    ]

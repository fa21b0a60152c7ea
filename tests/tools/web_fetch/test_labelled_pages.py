"""Content preservation on 72 real pages: every passage that must survive does, furniture goes.

The labels are ``bench/pages`` (its README gives the pages' sources, licences and how the labels
were made). The pages themselves are built from local mirrors of their sources and never
committed; a page not built here is skipped with the command that builds it. A page Lookout
does not yet read right is an expected failure naming why, strict, so that fixing it is noticed.
"""

import gzip
import json
import re
from pathlib import Path

import pytest

from tools.web_fetch.extract import extract

PAGES = Path(__file__).resolve().parents[3] / "bench" / "pages"
LABELS = json.loads((PAGES / "labels.json").read_text(encoding="utf-8"))
SOURCES = json.loads((PAGES / "sources.json").read_text(encoding="utf-8"))
BUILD = ".venv/bin/python bench/extraction_sets.py pages"
_WORD = re.compile(r"\w+")
# Markdown links and images read as their text, as bench/extraction.py reads them; "_" is a
# word character to \w but an emphasis mark to Markdown, so it separates words on both sides.
_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*[^)]*\)")
# name -> why Lookout misses it; none today.
KNOWN_MISSES: dict[str, str] = {}


def words(text: str) -> str:
    """Return the words of a text in a row: link syntax, URLs and emphasis marks left out."""
    plain = _LINK.sub(r"\1", text).replace("_", " ")
    return f" {' '.join(_WORD.findall(plain))} "


def labelled(name: str) -> pytest.param:
    marks = ()
    if name in KNOWN_MISSES:
        marks = pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[name])
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [labelled(name) for name in sorted(LABELS)])
def test_labelled_page_keeps_what_must_survive_and_drops_its_furniture(name):
    label = LABELS[name]
    page = PAGES / "html" / f"{name}.html.gz"
    if not page.exists():
        pytest.skip(
            f"bench/pages/html/{name}.html.gz is not built: {BUILD} builds the labelled pages "
            f"from the mirrors of their sources (this one: fetch github:{SOURCES[name]['repo']})"
        )
    with gzip.open(page, "rt", encoding="utf-8") as file:
        text = words(extract(file.read(), label["url"]).text)

    missing = [passage for passage in label["keep"] if words(passage) not in text]
    leaked = [passage for passage in label["drop"] if words(passage) in text]
    assert (missing, leaked) == ([], [])


def test_the_labelled_set_covers_the_page_types_of_the_issue():
    types = [label["type"] for label in LABELS.values()]
    assert len(types) >= 60
    for kind in ("wiki", "documentation", "product page", "blog", "news", "qa", "forum", "paper"):
        assert kind in types


def test_every_labelled_page_names_the_source_it_is_built_from():
    assert sorted(SOURCES) == sorted(LABELS)
    for source in SOURCES.values():
        assert sorted(source) == ["commit", "licence", "path", "repo"]
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])

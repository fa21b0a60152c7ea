"""Measures what each extraction rule gains, by switching it off and scoring every set again.

Run from the project root: ``.venv/bin/python bench/extraction_rules.py [--data DIR ...]
[--only WORDS]`` (``--only``: the rules whose label holds WORDS).
The peers (trafilatura and plain readability) run once, for the "pages lost" count; then
Lookout runs once as it is and once with each rule switched off (or, for a row marked
"variant", changed). A rule is worth keeping
where switching it off lowers F1 or loses pages; the table in docs/benchmarks.md comes from here.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import extraction
import html2text
from extraction import EXTRACTORS, LOST_RECALL, PEER_KEPT_RECALL, Page, Score, load, run
from readability import Document

import tools.web_fetch.class_names as class_names_module
import tools.web_fetch.extract as extract_module
import tools.web_fetch.extract_boilerplate as boilerplate_module
import tools.web_fetch.hidden as hidden_module
import tools.web_fetch.main_block as main_block_module
import tools.web_fetch.markdown as markdown_module
import tools.web_fetch.readability_choice as readability_module

LOOKOUT = "Lookout (readability-lxml + html2text, pruned)"
PEERS = ["trafilatura (defaults)", "trafilatura (fast)", "readability-lxml + html2text, plain"]


def _off(module: Any, name: str, value: Any) -> Callable[[], contextlib.AbstractContextManager]:
    @contextlib.contextmanager
    def switch() -> Iterator[None]:
        saved = getattr(module, name)
        setattr(module, name, value)
        try:
            yield
        finally:
            setattr(module, name, saved)

    return switch


def _names_off(name: str, value: Any) -> Callable[[], contextlib.AbstractContextManager]:
    # The name rule caches its verdicts: they are cleared before and after the switch.
    switch = _off(class_names_module, name, value)

    @contextlib.contextmanager
    def cleared() -> Iterator[None]:
        class_names_module._names_furniture.cache_clear()
        try:
            with switch():
                yield
        finally:
            class_names_module._names_furniture.cache_clear()

    return cleared


RULES: dict[str, Callable[[], contextlib.AbstractContextManager]] = {
    "main block protected": _off(
        extract_module, "protected_elements", lambda body, main, sizes: set()
    ),
    "dialogs (by ARIA role) removed": _off(boilerplate_module, "_DIALOG_ROLES", frozenset()),
    "a page with under 400 characters of prose outside links is read as a list of links": _off(
        extract_module, "_MIN_PROSE_CHARS", 0
    ),
    "class/id names": _off(boilerplate_module, "names_furniture", lambda classes, id="": False),
    "link lists": _off(boilerplate_module, "_remove_link_lists", lambda body, kept: None),
    "nav, header, footer outside the block": _off(
        extract_module, "_FURNITURE_TAGS", ("lookout-no-such-tag",)
    ),
    "readability under half the block: read the block": _off(
        extract_module, "_MIN_SHARE_OF_MAIN", 0.0
    ),
    "...only when what readability left out is prose (off: whatever it is)": _off(
        extract_module, "_MAX_LEFT_OUT_LINK_DENSITY", 1.0
    ),
    "blocks of the chosen block's tag and class are read with it": _off(
        extract_module, "_with_parts", lambda content, body: content
    ),
    'the full text behind a visible "read more" teaser is read': _off(
        hidden_module, "_teasers", lambda root, hidden: []
    ),
    "read past </body> and </html>": _off(extract_module, "_DOCUMENT_END", re.compile(b"$^")),
    "readability keeps the block's tables and asides": _off(
        extract_module,
        "readability_choice",
        lambda root, keep: readability_module.readability_choice(root, keep=[]),
    ),
    "readability's own removal of blocks by name substrings (off: back on)": _off(
        readability_module._PrunedDocument,
        "remove_unlikely_candidates",
        Document.remove_unlikely_candidates,
    ),
    "a paragraph beside readability's choice is judged by all its text (off: by its text "
    "before its first child)": _off(
        readability_module._PrunedDocument, "get_article", Document.get_article
    ),
    "a table's row group stands for its table": _off(
        readability_module, "_ROW_GROUPS", frozenset()
    ),
    "a headed section stands for its headed siblings' parent": _off(
        readability_module, "_HEADINGS", frozenset()
    ),
    "a thread's replies named as comments are read": _off(
        extract_module, "thread_posts", lambda main, protected, sizes: []
    ),
    "...or the block is itself named as comments, its children the replies": _off(
        boilerplate_module, "names_comments", lambda classes, id="": False
    ),
    "...unless the post is an article four times the typical reply (off: always)": _off(
        extract_module, "_ARTICLE_OVER_POST", float("inf")
    ),
    "...under a declared article, unless it is shorter than the typical reply (off: never read)": (
        _off(extract_module, "_DECLARED_ARTICLE_OVER_POST", 0)
    ),
    "a taxonomy class's slug is not read as a name (category-social-media)": _names_off(
        "_TAXONOMY_TOKENS", frozenset()
    ),
    "a page's declared article body (articleBody, entry-content) is read": _off(
        extract_module, "declared_body", lambda body, min_words: None
    ),
    "...with its parts, siblings of its class": _off(
        extract_module, "parts_of", lambda declared: [declared]
    ),
    "a page's declared recipe (schema.org Recipe, hRecipe) is read whole": _off(
        extract_module, "declared_recipe", lambda body, min_words: None
    ),
    "prose between the headline and the content is read before it": _off(
        extract_module, "_with_lead", lambda content, headline: content
    ),
    "...or beside the headline, in its row of the layout (off: near the content only)": _off(
        extract_module, "_beside", lambda paragraph, headline: False
    ),
    "an article's own <header> stays in the tree (off: removed outside the block)": _off(
        extract_module, "_heads_article", lambda header: False
    ),
    "...from the heading the title repeats (off: from the first h1)": _off(
        extract_module, "_headline", lambda body, title: next(body.iter("h1"), None)
    ),
    "a data table's cells are not link lists": _off(
        boilerplate_module, "_data_tables", lambda own: set()
    ),
    "images": _off(boilerplate_module, "keep_image", lambda element: False),
    "the space before a link or code inside bold or italics is kept": _off(
        markdown_module, "_Converter", html2text.HTML2Text
    ),
    "(variant) walk down into a child with half the prose, not 0.7": _off(
        main_block_module, "_DESCEND_SHARE", 0.5
    ),
    "main block found by density (off: the body)": _off(
        extract_module, "find_main_block", lambda body, sizes, links=False: body
    ),
}
assert main_block_module.find_main_block is extract_module.find_main_block


def lookout_scores(pages: list[Page], peer_best: list[float]) -> Score:
    """Return Lookout's score on ``pages``, counting a page lost against the peers' best."""
    score = run(pages, [LOOKOUT])[0]
    score.lost = sum(
        recall < LOST_RECALL and best >= PEER_KEPT_RECALL
        for recall, best in zip(score.recalls, peer_best, strict=True)
    )
    return score


def main() -> None:
    """Print one table: F1 and pages lost on each set, as is and with each rule off."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", help="a benchmark folder; repeatable")
    parser.add_argument("--only", default="", help="run only the rules whose label holds this")
    args = parser.parse_args()
    own = sorted(p.parent for p in extraction.OWN_DATA.glob("*/ground-truth.json"))
    folders = args.data or [extraction.SHARED_DATA, *own, extraction.LABELLED_PAGES]
    sets = [(folder.name, load(folder, None)) for folder in folders]
    best = []
    for _name, pages in sets:
        peers = run(pages, [name for name in PEERS if name in EXTRACTORS])
        best.append([max(column) for column in zip(*(p.recalls for p in peers), strict=True)])
    header = " | ".join(f"{name} F1 | lost" for name, _pages in sets)
    print(f"| Switched off | {header} |")
    print("| --- |" + " ---: | ---: |" * len(sets))
    rules = {label: switch for label, switch in RULES.items() if args.only in label}
    for label, switch in {"nothing (as shipped)": contextlib.nullcontext, **rules}.items():
        with switch():
            cells = []
            for (_name, pages), peer_best in zip(sets, best, strict=True):
                score = lookout_scores(pages, peer_best)
                cells.append(f"{score.f1:.3f} | {score.lost}")
        print(f"| {label} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()

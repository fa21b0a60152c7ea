"""Scores Lookout's article extraction against its peers on a human-annotated set of pages.

Run from the project root: ``.venv/bin/python bench/extraction.py [--data DIR ...] [--limit N]``;
without ``--data`` it scores the shared set and every set under ``bench/data``, side by side.
The shared data's README gives the format and the metric, the upstream benchmark's own: texts
are tokenised with ``\\w+`` (Unicode, case-sensitive), cut into word 4-gram shingles and compared
as multisets (TP, FP, FN per page); precision and recall are averaged over pages, a page with
an empty prediction being left out of the precision mean and scoring recall 0, and F1 is the
harmonic mean of the two means. Markdown output is stripped of its syntax before scoring, outside
the time measured (the scorer's work, not the extractor's).
Every extractor runs on every page in one process, the extractors taking turns; time is CPU time
per page, the fastest of ``--repeats`` rounds (3 by default). A page is "lost"
by an extractor when its recall is under 0.5 while some peer's is 0.8 or more: the article
was there to be found, and the extractor's reader would answer from a fragment of it.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import html2text
import lxml.html

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.web_fetch.extract import extract  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "extraction"
OWN_DATA = Path(__file__).resolve().parent / "data"
LABELLED_PAGES = Path(__file__).resolve().parent / "pages"
LOST_RECALL = 0.5
PEER_KEPT_RECALL = 0.8
_TOKEN = re.compile(r"\w+")
_IMAGE = re.compile(
    r"!\[([^\]]*)\]\((?:<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+\"[^\"]*\")?\)"
)
# Link text may hold one level of brackets: Wikipedia's citations come out as [[165]](url).
_LINK = re.compile(
    r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\((?:<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+\"[^\"]*\")?\)"
)
_EMPHASIS = re.compile(r"(?<![\w\\])[*_]{1,3}(?=\S)|(?<=[^\s\\])[*_]{1,3}(?!\w)")
_LINE_MARKERS = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[*+-][ \t]+|\d+\\?\.[ \t]+|```\w*)", re.M
)
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")


def strip_markdown(text: str) -> str:
    """Return Markdown as plain text: link and image syntax to their text, markers removed."""
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _LINE_MARKERS.sub("", text)
    text = _EMPHASIS.sub("", text)
    return _ESCAPE.sub(r"\1", text)


def shingles(text: str, n: int = 4) -> Counter[str]:
    """Return the multiset of word n-grams of a text (one shingle of all words when shorter)."""
    tokens = _TOKEN.findall(text or "")
    return Counter(
        " ".join(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens
    )


@dataclass(frozen=True)
class Labels:
    """A labelled page's truth: passages that must be in the output and text that must not."""

    keep: list[str]
    drop: list[str]


def contains(text: str, passage: str) -> bool:
    """Return whether the words of ``passage`` occur in ``text`` in a row (markup aside)."""
    words = " ".join(_TOKEN.findall(passage))
    return bool(words) and f" {words} " in f" {' '.join(_TOKEN.findall(text))} "


def overlap(truth: str, prediction: str) -> tuple[int, int, int]:
    """Return TP, FP and FN of the prediction's shingles against the truth's."""
    expected, found = shingles(truth), shingles(prediction)
    tp = sum((expected & found).values())
    return tp, sum(found.values()) - tp, sum(expected.values()) - tp


@dataclass
class Score:
    """Per-page precision, recall and CPU time of one extractor."""

    name: str
    precisions: list[float] = field(default_factory=list)
    recalls: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    empty: int = 0
    lost: int = 0
    scored: bool = True

    def add(self, truth: str | Labels, prediction: str, seconds: float) -> None:
        """Record one page: shingle precision and recall, or for a labelled page the share of
        its must-drop text left out and of its must-keep passages found."""
        self.seconds.append(seconds)
        if not self.scored:
            return
        if isinstance(truth, Labels):
            self.empty += not _TOKEN.search(prediction)
            found = sum(contains(prediction, passage) for passage in truth.keep)
            leaked = sum(contains(prediction, passage) for passage in truth.drop)
            self.recalls.append(found / len(truth.keep) if truth.keep else 1.0)
            self.precisions.append(1 - leaked / len(truth.drop) if truth.drop else 1.0)
            return
        tp, fp, fn = overlap(truth, prediction)
        if tp + fp == 0:
            self.recalls.append(0.0)
            self.empty += bool(_TOKEN.search(truth))
            return
        self.precisions.append(tp / (tp + fp))
        self.recalls.append(tp / (tp + fn) if tp + fn else 1.0)

    @property
    def f1(self) -> float:
        """The harmonic mean of the mean precision and the mean recall."""
        precision = statistics.fmean(self.precisions) if self.precisions else 0.0
        recall = statistics.fmean(self.recalls) if self.recalls else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    def row(self) -> str:
        """Return this extractor's line of the Markdown table."""
        ms = sorted(s * 1000 for s in self.seconds)
        median = statistics.median(ms)
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        if not self.scored:
            return f"| {self.name} | – | – | – | {median:.1f} | {p95:.1f} | – | – |"
        precision = statistics.fmean(self.precisions) if self.precisions else 0.0
        recall = statistics.fmean(self.recalls)
        return (
            f"| {self.name} | {precision:.3f} | {recall:.3f} | {self.f1:.3f} "
            f"| {median:.1f} | {p95:.1f} | {self.empty} | {self.lost} |"
        )


def lookout(html: str, url: str) -> str:
    """Lookout's extraction, as web_fetch uses it (Markdown)."""
    return extract(html, url).text


def readability_html2text(html: str, url: str) -> str:
    """readability-lxml picking the content and html2text converting it, both as shipped."""
    from readability import Document

    converter = html2text.HTML2Text()
    converter.body_width = 0
    return converter.handle(Document(html, url=url).summary())


def readabilipy_markdownify(html: str, url: str) -> str:
    """The reference MCP fetch server's pipeline, in readabilipy's pure-Python mode."""
    import markdownify
    from readabilipy import simple_json_from_html_string

    content = simple_json_from_html_string(html, use_readability=False).get("content") or ""
    return markdownify.markdownify(content, heading_style=markdownify.ATX)


def trafilatura_with(**options: bool) -> Callable[[str, str], str]:
    """trafilatura's plain-text extraction with the given options."""
    import trafilatura

    def run(html: str, url: str) -> str:
        return trafilatura.extract(html, url=url, **options) or ""

    return run


def lxml_parse(html: str, url: str) -> str:
    """The floor: parsing the page with lxml and nothing else."""
    lxml.html.document_fromstring(html)
    return ""


VERBOSE = False
EXTRACTORS: dict[str, Callable[[str, str], str]] = {
    "Lookout (readability-lxml + html2text, pruned)": lookout,
    "trafilatura (defaults)": trafilatura_with(),
    "trafilatura (favor_precision)": trafilatura_with(favor_precision=True),
    "trafilatura (fast)": trafilatura_with(fast=True),
    "readability-lxml + html2text, plain": readability_html2text,
    "readabilipy (pure Python) + markdownify": readabilipy_markdownify,
    "lxml parse alone (floor, time only)": lxml_parse,
}

# Extractors that write Markdown: their output is read as plain text (strip_markdown) before
# scoring, outside the time measured.
MARKDOWN_OUTPUT = frozenset(
    {
        "Lookout (readability-lxml + html2text, pruned)",
        "readability-lxml + html2text, plain",
        "readabilipy (pure Python) + markdownify",
    }
)


Page = tuple[str, str, str, str | Labels]


def load(data: Path, limit: int | None) -> list[Page]:
    """Return (id, url, html, truth) for each page of the set, in a stable order.

    A set has ``ground-truth.json`` (article bodies) or ``labels.json`` (passages to keep and
    to drop); its pages are ``html/<id>.html.gz``.
    """
    labelled = (data / "labels.json").exists()
    entries = json.loads(
        (data / ("labels.json" if labelled else "ground-truth.json")).read_text(encoding="utf-8")
    )
    pages: list[Page] = []
    for key in sorted(entries)[:limit]:
        entry = entries[key]
        truth = Labels(entry["keep"], entry["drop"]) if labelled else entry["articleBody"]
        with gzip.open(data / "html" / f"{key}.html.gz", "rt", encoding="utf-8") as file:
            pages.append((key, entry["url"], file.read(), truth))
    return pages


def run(pages: list[Page], names: list[str], repeats: int = 1) -> list[Score]:
    """Run every named extractor on each page in turn and return their scores.

    Extractors take turns page by page, so a busy spell of the machine slows them all alike;
    with ``repeats`` above one each page's time is the fastest of that many rounds of turns
    (the scores are the first round's), which leaves out the machine's other work.
    """
    scores = [Score(name, scored=EXTRACTORS[name] is not lxml_parse) for name in names]
    scored = [score for score in scores if score.scored]
    for key, url, html, truth in pages:
        fastest = {score.name: float("inf") for score in scores}
        predictions: dict[str, str] = {}
        for _round in range(max(1, repeats)):
            for score in scores:
                gc.collect()  # the garbage of the extractor before is not this one's to collect
                start = time.process_time()
                try:
                    prediction = EXTRACTORS[score.name](html, url)
                except Exception:  # a peer that raises on a page reads it as nothing
                    prediction = ""  # (readabilipy refuses an XML encoding declaration)
                fastest[score.name] = min(fastest[score.name], time.process_time() - start)
                predictions.setdefault(score.name, prediction)
        for name in MARKDOWN_OUTPUT.intersection(predictions):  # scoring's work, not timed
            predictions[name] = strip_markdown(predictions[name])
        for score in scores:
            score.add(truth, predictions[score.name], fastest[score.name])
        recalls = [score.recalls[-1] for score in scored]
        for score in scored:
            if score.recalls[-1] < LOST_RECALL and max(recalls) >= PEER_KEPT_RECALL:
                score.lost += 1
                if VERBOSE:
                    print(f"lost by {score.name}: {key} {url}", file=sys.stderr)
    return scores


def main() -> None:
    """Print the Markdown table of every extractor's scores."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", help="a benchmark folder; repeatable")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N pages")
    parser.add_argument("--only", default="", help="comma-separated words; run matching extractors")
    parser.add_argument("--verbose", action="store_true", help="name each lost page on stderr")
    parser.add_argument(
        "--repeats", type=int, default=3, help="time each page as the fastest of N rounds"
    )
    args = parser.parse_args()
    global VERBOSE
    VERBOSE = args.verbose
    words = [w.strip().lower() for w in args.only.split(",") if w.strip()]
    names = [n for n in EXTRACTORS if not words or any(w in n.lower() for w in words)]
    own = sorted(p.parent for p in OWN_DATA.glob("*/ground-truth.json"))
    folders = args.data or [SHARED_DATA, *own, LABELLED_PAGES]
    f1s: dict[str, list[float]] = {name: [] for name in names}
    for folder in folders:
        pages = load(folder, args.limit)
        scores = run(pages, names, args.repeats)
        print(
            f"### {folder.name}: {len(pages)} pages, CPU time per page "
            f"(fastest of {args.repeats}), one process\n"
        )
        if pages and isinstance(pages[0][3], Labels):
            print(
                "Precision: share of must-drop text left out; recall: must-keep passages found.\n"
            )
        print("| Extractor | Precision | Recall | F1 | Median ms | p95 ms | Empty | Lost |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for score in scores:
            print(score.row())
            f1s[score.name].append(score.f1)
        print()
    if len(folders) > 1:
        print("| Extractor | Mean F1 over the sets |\n| --- | ---: |")
        for name in names:
            if EXTRACTORS[name] is not lxml_parse:
                print(f"| {name} | {statistics.fmean(f1s[name]):.3f} |")


if __name__ == "__main__":
    main()

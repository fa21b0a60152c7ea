"""Does the output hold the article's opening? A lead check on two more projects' fixtures.

Run from the project root: ``.venv/bin/python bench/leads.py [--mirrors DIR] [--verbose]``.

Two projects keep real pages whose tests name the first words of the article:

- goose3 (``goose3/goose3``, Apache License 2.0): ``tests/data/content/<name>.html``, with the
  article's opening as ``expected.cleaned_text`` in ``<name>.json``;
- Postlight's parser (``postlight/parser``, MIT or Apache License 2.0): ``fixtures/*.html``,
  with the content's first 13 words as ``first13`` in ``src/extractors/custom/*/index.test.js``.

No rule was written on either set. Their leads are the other projects' own (goose's its first
sentences, Postlight's its content's first words, pictures' captions and all), so a lead is
found when any six of its first words in a row (fewer for a shorter lead) are in the output,
Markdown aside: a lead run together by the other project's text joining (``cmAvailable``)
still matches, and a lost lead or a lost article does not. The check says nothing about
boilerplate kept; the extraction sets measure that. The pages are read from local mirrors
(``mirrors.py``) and never committed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from extraction import _TOKEN, lookout, readability_html2text, strip_markdown, trafilatura_with
from mirrors import DEFAULT_MIRRORS, MirrorError, find_git_dir, list_folder, missing_mirror, show

# importable once extraction has put the project's root on the path
from tools.charset import decode_page  # noqa: E402
from tools.web_fetch.main_block import UNSPACED_LETTER  # noqa: E402

LEAD_WORDS = 13  # of the lead, the words (between spaces) looked at: Postlight's 13
RUN = 6  # words in a row that make a match


@dataclass(frozen=True)
class Fixture:
    """A page and the opening words of its article, as another project's test names them."""

    name: str
    url: str
    html: str
    lead: str


def goose_fixtures(git_dir: Path) -> Iterator[Fixture]:
    """goose3's content fixtures: ``<name>.html`` beside ``<name>.json``'s ``cleaned_text``."""
    folder = "tests/data/content"
    names = set(list_folder(git_dir, "HEAD", folder))
    for name in sorted(names):
        stem = name.removesuffix(".json")
        if stem == name or f"{stem}.html" not in names:
            continue
        expected = json.loads(show(git_dir, "HEAD", f"{folder}/{name}"))
        lead = (expected.get("expected") or {}).get("cleaned_text") or ""
        if lead.strip():
            page = show(git_dir, "HEAD", f"{folder}/{stem}.html")
            url = expected.get("url") or "http://example.com/"
            yield Fixture(f"goose3/{stem}", url, decode_page(page, "text/html", None), lead)


_FIXTURE = re.compile(r"readFileSync\(\s*['\"]\./(fixtures/[^'\"]+)['\"]")
_URL = re.compile(r"\burl\s*=\s*['\"]([^'\"]+)['\"]")
_FIRST13 = re.compile(r"first13,\s*(?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`([^`]*)`)")


def postlight_fixtures(git_dir: Path) -> Iterator[Fixture]:
    """Postlight's site tests: each ``first13`` with the fixture and URL its test reads."""
    root = "src/extractors/custom"
    for site in list_folder(git_dir, "HEAD", root):
        try:
            test = show(git_dir, "HEAD", f"{root}/{site}/index.test.js").decode("utf-8")
        except MirrorError:
            continue
        files, urls = _FIXTURE.findall(test), _URL.findall(test)
        leads = ["".join(parts) for parts in _FIRST13.findall(test)]
        if not files or not leads or len(leads) > len(files):
            continue  # a test this reader does not follow: left out, not guessed
        for n, lead in enumerate(leads):
            if not lead.strip():
                continue  # a test that expects no content names no opening
            path = files[n]
            url = urls[n] if n < len(urls) else f"https://{site}/"
            page = show(git_dir, "HEAD", path)
            name = f"postlight/{Path(path).stem}"
            lead = re.sub(r"\\(.)", r"\1", lead)  # the test's string escapes (\')
            yield Fixture(name, url, decode_page(page, "text/html", None), lead)


SOURCES: dict[str, Callable[[Path], Iterator[Fixture]]] = {
    "goose3/goose3": goose_fixtures,
    "postlight/parser": postlight_fixtures,
}


EXTRACTORS: dict[str, Callable[[str, str], str]] = {
    "Lookout": lookout,
    "trafilatura (defaults)": trafilatura_with(),
    "readability-lxml + html2text, plain": readability_html2text,
}


def words(text: str) -> list[str]:
    """Return the words of ``text``; in scripts written without spaces, each letter is one."""
    return _TOKEN.findall(UNSPACED_LETTER.sub(r" \g<0> ", text))


def found(lead: str, output: str) -> bool:
    """Return whether ``RUN`` of the lead's first words in a row are in the output."""
    words_of_lead = words(" ".join(lead.split()[:LEAD_WORDS]))
    text = f" {' '.join(words(strip_markdown(output)))} "
    run = min(RUN, len(words_of_lead))
    return run > 0 and any(
        f" {' '.join(words_of_lead[i : i + run])} " in text
        for i in range(len(words_of_lead) - run + 1)
    )


def check(fixtures: list[Fixture], verbose: bool) -> dict[str, int]:
    """Return how many leads each extractor found; name on stdout the pages Lookout missed."""
    counts = dict.fromkeys(EXTRACTORS, 0)
    for fixture in fixtures:
        hits = {}
        for name, run in EXTRACTORS.items():
            try:
                hits[name] = found(fixture.lead, run(fixture.html, fixture.url))
            except Exception as exc:  # noqa: BLE001 - a peer's crash is that peer's miss
                print(f"  {name} failed on {fixture.name}: {exc!r}", file=sys.stderr)
                hits[name] = False
            counts[name] += hits[name]
        if verbose and not hits["Lookout"]:
            peers = [name for name, hit in hits.items() if hit]
            by = f"found by {', '.join(peers)}" if peers else "found by no peer"
            print(f"- missed: {fixture.name} ({by}): {fixture.lead[:80]!r}")
    return counts


def main() -> None:
    """Print, for each source, how many article openings each extractor kept."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--verbose", action="store_true", help="name each page Lookout missed")
    args = parser.parse_args()
    for repo, read in SOURCES.items():
        git_dir = find_git_dir(args.mirrors, repo)
        if git_dir is None:
            print(missing_mirror(args.mirrors, repo), file=sys.stderr)
            continue
        fixtures = list(read(git_dir))
        counts = check(fixtures, args.verbose)
        print(f"\n### {repo}: {len(fixtures)} pages, article openings found\n")
        print("| Extractor | Found | Share |\n| --- | ---: | ---: |")
        for name, count in counts.items():
            print(f"| {name} | {count} of {len(fixtures)} | {count / max(1, len(fixtures)):.3f} |")


if __name__ == "__main__":
    main()

"""Builds every bench set that is not committed: the labelled pages and two held-out sets.

Run from the project root: ``.venv/bin/python bench/extraction_sets.py [SET ...]`` builds the
named sets (all of them when none is named) from the local git mirrors in ``--mirrors DIR``
(default: the ``.mirror`` folder nearest above the project, ``../.mirror`` as fetch leaves
it; ``mirrors.py``), and exits 0 only when every page
asked for was built. A missing mirror is named with the fetch source that gets it, and skipped.

- ``pages``: the labelled pages, ``bench/pages/html``, each from its own repository
  (``labelled_pages.py``, ``bench/pages/README.md``).
- ``l3s-gn1-2008`` and ``cleaneval-2007``: held-out sets under ``bench/data``, from the public
  repository ``j-szulc/html-cleaning-dataset-merged``, which gathers CleanEval and L3S-GN1
  (among others) in one layout (``<set>/input/<n>.html`` and ``<set>/GoldStandard/<n>.txt``;
  L3S-GN1's gold is the page with its text blocks marked). A fixed, evenly spread sample of each
  set is written in the shared benchmark's format (``ground-truth.json`` and
  ``html/<id>.html.gz``), so that ``bench/extraction.py --data`` reads every set alike. Each
  set's README (``bench/data/README.md``) gives its source and licence.
- ``cleaneval-dev-2007`` and ``cleanportaleval-2013``: two more sets of the same repository,
  written to ``bench/checks`` rather than ``bench/data``: checks run beside the sets, not sets
  ``bench/extraction.py`` scores by default (``bench/data/README.md`` says why).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

import labelled_pages
import lxml.html
from mirrors import DEFAULT_MIRRORS, find_git_dir, list_folder, missing_mirror, show

OUT = Path(__file__).resolve().parent / "data"
CHECKS_OUT = Path(__file__).resolve().parent / "checks"
HELD_OUT_REPO = "j-szulc/html-cleaning-dataset-merged"
# (upstream folder, our folder, every n-th page)
SETS = (
    ("page-signal-master", "l3s-gn1-2008", 4),
    ("cleaneval-final", "cleaneval-2007", 6),
    ("dragnet_data", "dragnet-2012", 8),
)
# Built beside the sets, every page: CleanEval's development set (its annotation is the final
# set's, so it adds pages, not a view) and CleanPortalEval (70 pages, but of four sites).
CHECKS = (
    ("cleaneval-dev", "cleaneval-dev-2007", 1),
    ("CleanPortalEval-master", "cleanportaleval-2013", 1),
)
# L3S-GN1 marks a page's text by class: 1 headline, 2 full text, 3 supplemental, 4 comments,
# 5 related content. The article body, as the shared set has it, is the full text.
_L3S_FULL_TEXT = "//span[@class='x-nc-sel2'][not(ancestor::span[starts-with(@class, 'x-nc-sel')])]"
_CLEANEVAL_MARK = re.compile(r"^\s*<(?:p|h|l)>", re.M)
_URL_LINE = re.compile(r"\A\s*URL:\s*(\S+)[^\n]*\n")
_TEXT_ID = re.compile(r'<text id="([^"]+)"')
# Dragnet's gold holds the article, then this line, then the reader comments (not the article).
_DRAGNET_COMMENTS = "!@#$%^&*()"


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


def _l3s_full_text(marked: str) -> str:
    root = lxml.html.document_fromstring(marked.encode("utf-8"))
    blocks = (" ".join(span.text_content().split()) for span in root.xpath(_L3S_FULL_TEXT))
    return "\n\n".join(block for block in blocks if block)


def _names(git_dir: Path, folder: str) -> list[str]:
    listing = list_folder(git_dir, "HEAD", f"{folder}/GoldStandard")
    stems = [name[: -len(".txt")] for name in listing if name.endswith(".txt")]
    return sorted(stems, key=lambda stem: (len(stem), stem))


def build(git_dir: Path, folder: str, name: str, step: int, out: Path = OUT) -> int:
    """Write every ``step``-th page of one upstream set to ``out``; return how many were."""
    target = out / name
    (target / "html").mkdir(parents=True, exist_ok=True)
    truth: dict[str, dict[str, str]] = {}
    for stem in _names(git_dir, folder)[::step]:
        if stem.startswith("."):
            continue
        gold = _decode(show(git_dir, "HEAD", f"{folder}/GoldStandard/{stem}.txt")).lstrip("\ufeff")
        html = _decode(show(git_dir, "HEAD", f"{folder}/input/{stem}.html"))
        url_line = _URL_LINE.match(gold)
        text_id = _TEXT_ID.search(html[:2000])
        url = url_line.group(1) if url_line else text_id.group(1) if text_id else ""
        gold = _l3s_full_text(gold) if "x-nc-sel" in gold else gold
        gold = gold.split(_DRAGNET_COMMENTS, 1)[0]
        gold = _CLEANEVAL_MARK.sub("", _URL_LINE.sub("", gold))
        if not gold.strip():
            continue  # nothing marked: the page has no article to score
        truth[stem] = {"articleBody": gold.strip(), "url": url or f"http://{name}.invalid/{stem}"}
        with gzip.open(target / "html" / f"{stem}.html.gz", "wt", encoding="utf-8") as file:
            file.write(html)
    (target / "ground-truth.json").write_text(
        json.dumps(truth, ensure_ascii=False, indent=0), encoding="utf-8"
    )
    return len(truth)


def build_held_out(mirrors: Path, sets: list[tuple[str, str, int]]) -> bool:
    """Build the given held-out sets from their mirror; return False when it is missing."""
    git_dir = find_git_dir(mirrors, HELD_OUT_REPO)
    if git_dir is None:
        skipped = ", ".join(name for _, name, _ in sets)
        print(f"{missing_mirror(mirrors, HELD_OUT_REPO)}; skipped {skipped}", file=sys.stderr)
        return False
    for folder, name, step in sets:
        out = CHECKS_OUT if (folder, name, step) in CHECKS else OUT
        print(name, build(git_dir, folder, name, step, out), "pages in", out / name)
    return True


def main() -> int:
    """Build the sets named on the command line, or every one; return 0 when all were built."""
    names = ["pages", *(name for _, name, _ in SETS + CHECKS)]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", metavar="SET", help=f"one of {', '.join(names)}")
    parser.add_argument(
        "--mirrors", type=Path, default=DEFAULT_MIRRORS, help="the mirrors' folder (%(default)s)"
    )
    parser.add_argument(
        "--pages",
        type=Path,
        default=labelled_pages.PAGES,
        help="the labelled set's folder: sources.json is read, html/ written (%(default)s)",
    )
    args = parser.parse_args()
    unknown = [name for name in args.sets if name not in names]
    if unknown:
        parser.error(f"no set named {', '.join(unknown)}; the sets are {', '.join(names)}")
    wanted = args.sets or names
    complete = True
    if "pages" in wanted:
        complete = labelled_pages.build(args.mirrors, args.pages)
    held_out = [entry for entry in SETS + CHECKS if entry[1] in wanted]
    if held_out:
        complete = build_held_out(args.mirrors, held_out) and complete
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())

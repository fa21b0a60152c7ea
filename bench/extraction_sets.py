"""Builds the extra extraction benchmark sets under ``bench/data`` from a local git mirror.

Run from the project root: ``.venv/bin/python bench/extraction_sets.py GIT_DIR``, where GIT_DIR
is a clone (bare is fine) of the public repository ``j-szulc/html-cleaning-dataset-merged``,
which gathers CleanEval and L3S-GN1 (among others) in one layout (``<set>/input/<n>.html`` and
``<set>/GoldStandard/<n>.txt``; L3S-GN1's gold is the page with its text blocks marked). A
fixed, evenly spread sample of each set is written in the shared benchmark's format
(``ground-truth.json`` and ``html/<id>.html.gz``), so that ``bench/extraction.py --data`` reads
every set alike. Each set's README gives its source and licence.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
from pathlib import Path

import lxml.html

OUT = Path(__file__).resolve().parent / "data"
# (upstream folder, our folder, every n-th page)
SETS = (("page-signal-master", "l3s-gn1-2008", 4), ("cleaneval-final", "cleaneval-2007", 6))
# L3S-GN1 marks a page's text by class: 1 headline, 2 full text, 3 supplemental, 4 comments,
# 5 related content. The article body, as the shared set has it, is the full text.
_L3S_FULL_TEXT = "//span[@class='x-nc-sel2'][not(ancestor::span[starts-with(@class, 'x-nc-sel')])]"
_CLEANEVAL_MARK = re.compile(r"^\s*<(?:p|h|l)>", re.M)
_URL_LINE = re.compile(r"\A\s*URL:\s*(\S+)[^\n]*\n")
_TEXT_ID = re.compile(r'<text id="([^"]+)"')


def _show(git_dir: Path, path: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"], capture_output=True, check=True
    ).stdout


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
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", f"HEAD:{folder}/GoldStandard"],
        capture_output=True,
        check=True,
        text=True,
    ).stdout.split()
    stems = [name[: -len(".txt")] for name in listing if name.endswith(".txt")]
    return sorted(stems, key=lambda stem: (len(stem), stem))


def build(git_dir: Path, folder: str, name: str, step: int) -> int:
    """Write every ``step``-th page of one upstream set; return how many were written."""
    target = OUT / name
    (target / "html").mkdir(parents=True, exist_ok=True)
    truth: dict[str, dict[str, str]] = {}
    for stem in _names(git_dir, folder)[::step]:
        if stem.startswith("."):
            continue
        gold = _decode(_show(git_dir, f"{folder}/GoldStandard/{stem}.txt")).lstrip("\ufeff")
        html = _decode(_show(git_dir, f"{folder}/input/{stem}.html"))
        url_line = _URL_LINE.match(gold)
        text_id = _TEXT_ID.search(html[:2000])
        url = url_line.group(1) if url_line else text_id.group(1) if text_id else ""
        gold = _l3s_full_text(gold) if "x-nc-sel" in gold else gold
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


def main() -> None:
    """Build every set named in ``SETS``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("git_dir", type=Path)
    args = parser.parse_args()
    for folder, name, step in SETS:
        print(name, build(args.git_dir, folder, name, step), "pages")


if __name__ == "__main__":
    main()

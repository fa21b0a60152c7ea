"""Builds the labelled pages, ``bench/pages/html/<name>.html.gz``, from mirrors of their sources.

``bench/pages/sources.json`` names where each page comes from: ``{name: {repo, path, commit,
licence}}``. The page is ``path`` at ``commit`` in the mirror of ``repo`` (``mirrors.py``);
when the mirror lacks that commit, the file at the mirror's HEAD is taken instead, with a
warning, since it may differ from the page that was labelled. A page whose mirror is missing is
skipped, with the fetch source that gets it. The output is never committed (``.gitignore``).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

from mirrors import MirrorError, find_git_dir, has_commit, missing_mirror, show

PAGES = Path(__file__).resolve().parent / "pages"


def _problem(message: str) -> None:
    print(message, file=sys.stderr)


def _read(git_dir: Path, name: str, source: dict[str, str]) -> bytes:
    """Return the page's bytes at its commit, or at HEAD when the mirror lacks the commit."""
    if has_commit(git_dir, source["commit"]):
        return show(git_dir, source["commit"], source["path"])
    _problem(
        f"warning: {source['repo']} has no commit {source['commit']} in its mirror; "
        f"{name} is built from HEAD:{source['path']}, which may not be the page labelled"
    )
    return show(git_dir, "HEAD", source["path"])


def _write(target: Path, data: bytes) -> None:
    """Write ``data`` gzipped to ``target``, leaving a file that already holds it untouched."""
    if target.exists():
        try:
            if gzip.decompress(target.read_bytes()) == data:
                return
        except (OSError, EOFError):
            pass  # a broken file from an interrupted run: write it again
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(gzip.compress(data, mtime=0))
    os.replace(partial, target)  # a test reading the page meanwhile sees the old or the new


def build(mirrors: Path, pages: Path = PAGES) -> bool:
    """Write ``html/<name>.html.gz`` for every page of ``sources.json``; return whether all were."""
    sources: dict[str, dict[str, str]] = json.loads(
        (pages / "sources.json").read_text(encoding="utf-8")
    )
    by_repo: dict[str, list[str]] = {}
    for name, source in sources.items():
        by_repo.setdefault(source["repo"], []).append(name)
    out = pages / "html"
    out.mkdir(exist_ok=True)
    built = 0
    for repo, names in by_repo.items():
        git_dir = find_git_dir(mirrors, repo)
        if git_dir is None:
            _problem(f"{missing_mirror(mirrors, repo)}; skipped {', '.join(names)}")
            continue
        for name in names:
            try:
                data = _read(git_dir, name, sources[name])
            except MirrorError as exc:
                _problem(f"{name} is not built: {exc}")
                continue
            _write(out / f"{name}.html.gz", data)
            built += 1
    print(f"labelled pages: {built} of {len(sources)} built in {out}")
    return built == len(sources)

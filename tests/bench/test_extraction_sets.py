"""The bench-set builder writes each labelled page from its commit in a local git mirror.

Each test makes a throwaway bare repository in tmp_path, names it as a page's source, and runs
the builder's command on it as a user would.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.processes import ROOT

# git without the user's or the machine's configuration (signing, hooks, default branch)
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(*args: str, cwd: Path) -> str:
    """Run git in ``cwd`` and return what it printed."""
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=True
    ).stdout.strip()


def make_mirror(tmp_path: Path, repo: str, versions: list[str]) -> list[str]:
    """Mirror ``repo`` under tmp_path/mirrors, committing each version of page.html in turn;
    return the commits, oldest first."""
    work = tmp_path / "work" / repo
    work.mkdir(parents=True)
    git("init", "-q", cwd=work)
    commits = []
    for version in versions:
        (work / "page.html").write_text(version, encoding="utf-8")
        git("add", "page.html", cwd=work)
        git("commit", "-q", "-m", "page", cwd=work)
        commits.append(git("rev-parse", "HEAD", cwd=work))
    mirror = tmp_path / "mirrors" / repo.replace("/", "+") / "repo"
    git("clone", "-q", "--bare", str(work), str(mirror), cwd=tmp_path)
    return commits


def build_pages(tmp_path: Path, sources: dict[str, dict[str, str]]) -> subprocess.CompletedProcess:
    """Write sources.json into tmp_path/pages and run the builder on it."""
    pages = tmp_path / "pages"
    pages.mkdir(exist_ok=True)
    (pages / "sources.json").write_text(json.dumps(sources), encoding="utf-8")
    command = [sys.executable, "bench/extraction_sets.py", "pages"]
    command += ["--mirrors", str(tmp_path / "mirrors"), "--pages", str(pages)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)


def built(tmp_path: Path, name: str) -> str:
    """Return the text of a built page."""
    return gzip.decompress((tmp_path / "pages" / "html" / f"{name}.html.gz").read_bytes()).decode()


def source(repo: str, commit: str, path: str = "page.html") -> dict[str, str]:
    return {"repo": repo, "path": path, "commit": commit, "licence": "MIT"}


def test_a_page_is_built_from_its_commit_not_from_the_mirrors_head(tmp_path):
    labelled, _later = make_mirror(tmp_path, "acme/pages", ["<p>labelled</p>", "<p>later</p>"])

    result = build_pages(tmp_path, {"article": source("acme/pages", labelled)})

    assert result.returncode == 0, result.stderr
    assert built(tmp_path, "article") == "<p>labelled</p>"
    assert "1 of 1 built" in result.stdout


def test_a_commit_the_mirror_lacks_falls_back_to_head_with_a_warning(tmp_path):
    make_mirror(tmp_path, "acme/pages", ["<p>old</p>", "<p>head</p>"])
    unknown = "0" * 40

    result = build_pages(tmp_path, {"article": source("acme/pages", unknown)})

    assert result.returncode == 0, result.stderr
    assert built(tmp_path, "article") == "<p>head</p>"
    assert f"acme/pages has no commit {unknown}" in result.stderr
    assert "article is built from HEAD:page.html" in result.stderr


def test_a_missing_mirror_is_named_with_its_fetch_source_and_the_rest_still_built(tmp_path):
    (commit,) = make_mirror(tmp_path, "acme/pages", ["<p>here</p>"])

    result = build_pages(
        tmp_path,
        {
            "article": source("acme/pages", commit),
            "elsewhere": source("other/site", commit),
            "misnamed": source("acme/pages", commit, path="nowhere.html"),
        },
    )

    assert result.returncode == 1
    assert built(tmp_path, "article") == "<p>here</p>"
    assert "no mirror of other/site" in result.stderr
    assert "fetch github:other/site to get it; skipped elsewhere" in result.stderr
    assert "misnamed is not built: nowhere.html is not at" in result.stderr
    assert "1 of 3 built" in result.stdout
    assert sorted(path.name for path in (tmp_path / "pages" / "html").iterdir()) == [
        "article.html.gz"
    ]


def test_the_mirrors_are_the_nearest_mirror_folder_above_the_checkout(tmp_path):
    """A clone made deeper than beside the mirrors (as CI's may be) found none, and every
    labelled page's test skipped."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from mirrors import nearest_mirrors
    finally:
        sys.path.remove(str(ROOT / "bench"))
    checkout = tmp_path / "ci" / "clone" / "lookout"
    checkout.mkdir(parents=True)
    assert nearest_mirrors(checkout) == checkout.parent / ".mirror"  # none anywhere: beside
    (tmp_path / ".mirror").mkdir()
    assert nearest_mirrors(checkout) == tmp_path / ".mirror"
    (checkout.parent / ".mirror").mkdir()
    assert nearest_mirrors(checkout) == checkout.parent / ".mirror"

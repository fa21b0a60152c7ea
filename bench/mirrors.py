"""Reads files out of the local git mirrors that the bench sets are built from.

A mirror is a bare git directory at ``<mirrors>/<owner>+<name>/repo``, as the workplace's
``fetch github:<owner>/<name>`` leaves it. What is read from a mirror is written under
``bench/`` on this machine only and never committed: the sources are third-party material.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def nearest_mirrors(root: Path) -> Path:
    """Return the ``.mirror`` folder nearest above the checkout ``root`` (fetch puts the mirrors
    beside the checkouts; a clone made deeper, as CI's may be, finds them too), else
    ``root/../.mirror``."""
    for folder in root.parents:
        if (folder / ".mirror").is_dir():
            return folder / ".mirror"
    return root.parent / ".mirror"


DEFAULT_MIRRORS = nearest_mirrors(Path(__file__).resolve().parents[1])


class MirrorError(Exception):
    """A file cannot be read from a mirror; the message says which and what to do."""


def find_git_dir(mirrors: Path, repo: str) -> Path | None:
    """Return the bare git directory mirroring ``owner/name``, or None when it is not there."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    return git_dir if (git_dir / "HEAD").is_file() else None


def missing_mirror(mirrors: Path, repo: str) -> str:
    """Return the sentence that names a missing mirror and how to get it."""
    where = mirrors / repo.replace("/", "+") / "repo"
    return f"no mirror of {repo} at {where}: fetch github:{repo} to get it"


def _git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True)


def has_commit(git_dir: Path, commit: str) -> bool:
    """Return whether the mirror holds ``commit``."""
    return _git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0


def show(git_dir: Path, revision: str, path: str) -> bytes:
    """Return the bytes of ``path`` at ``revision``; raise MirrorError when it is not there."""
    result = _git(git_dir, "show", f"{revision}:{path}")
    if result.returncode != 0:
        raise MirrorError(f"{path} is not at {revision} in {git_dir}")
    return result.stdout


def list_folder(git_dir: Path, revision: str, folder: str) -> list[str]:
    """Return the names in ``folder`` at ``revision``; raise MirrorError when it is not there."""
    result = _git(git_dir, "ls-tree", "--name-only", f"{revision}:{folder}")
    if result.returncode != 0:
        raise MirrorError(f"{folder} is not at {revision} in {git_dir}")
    return result.stdout.decode("utf-8").split()

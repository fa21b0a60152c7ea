"""The package boundaries DESIGN.md draws, checked by walking every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG_MODULES = {"webapp/config.py", "celeryconfig.py"}
# What each package may not import, and why.
FORBIDDEN = {
    "tools": ("webapp", "workers", "flask", "celery", "sqlalchemy", "flask_sqlalchemy"),
    "webapp": ("workers",),
}
ENGINE_IDS = ("duckduckgo", "brave", "tavily", "searxng", "kagi")


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_packages_do_not_import_across_their_boundary(package):
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in python_files(package)
        for name in imported_modules(path)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert offences == []


def test_nothing_but_the_config_modules_reads_the_environment():
    offences = []
    for package in ("webapp", "workers", "tools"):
        for path in python_files(package):
            relative = str(path.relative_to(ROOT))
            if relative in CONFIG_MODULES:
                continue
            source = path.read_text(encoding="utf-8")
            if "os.environ" in source or "os.getenv" in source:
                offences.append(relative)
    assert offences == []


def test_no_module_outside_the_engines_folder_names_a_specific_engine():
    offences = []
    for package in ("webapp", "workers", "tools"):
        for path in python_files(package):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("tools/web_search/engines/"):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if node.value.lower() in ENGINE_IDS:
                        offences.append(f"{relative}: {node.value!r}")
    assert offences == []


def test_every_module_opens_with_a_docstring():
    missing = [
        str(path.relative_to(ROOT))
        for package in ("webapp", "workers", "tools")
        for path in python_files(package)
        if path.stat().st_size and ast.get_docstring(ast.parse(path.read_text())) is None
    ]
    assert missing == []

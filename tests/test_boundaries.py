"""The package boundaries DESIGN.md draws, checked by walking every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG_MODULES = {"core/config.py", "celeryconfig.py"}
# Modules that empty the environment and read no setting from it: the parser sandbox.
ENVIRONMENT_WIPERS = {"tools/sandbox.py"}
# What each package may not import. tools/ is the plugins' world: no app, no queue, no database.
# The web app and the workers are two doors standing on the core: neither imports the other,
# and the core imports neither.
FORBIDDEN = {
    "tools": ("core", "webapp", "workers", "flask", "celery", "sqlalchemy", "flask_sqlalchemy"),
    "core": ("webapp", "workers"),
    "webapp": ("workers",),
    "workers": ("webapp",),
}
PACKAGES = ("core", "webapp", "workers", "tools")
ENGINE_IDS = ("duckduckgo", "brave", "tavily", "searxng", "kagi")


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def imported_names(path: Path) -> set[str]:
    """Return every dotted name a module imports: ``from a import b`` counts as ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_packages_do_not_import_across_their_boundary(package):
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in python_files(package)
        for name in imported_names(path)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert offences == []


def test_the_host_names_no_built_in_plugin():
    """The host reaches plugins only through the plugin API, as it reaches a third party's: it
    hears their events (a failed search) through hooks of ``tools.api``, never their modules."""
    from core.config import SETTINGS_BY_NAME

    setting = SETTINGS_BY_NAME["LOOKOUT_PLUGINS"]
    built_in = setting.parse(setting.name, setting.default)
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for package in ("core", "webapp", "workers")
        for path in python_files(package)
        for name in imported_names(path)
        if any(name == plugin or name.startswith(plugin + ".") for plugin in built_in)
    ]
    assert offences == []


def test_nothing_but_the_config_modules_reads_the_environment():
    offences = []
    for package in PACKAGES:
        for path in python_files(package):
            relative = str(path.relative_to(ROOT))
            if relative in CONFIG_MODULES | ENVIRONMENT_WIPERS:
                continue
            source = path.read_text(encoding="utf-8")
            if "os.environ" in source or "os.getenv" in source:
                offences.append(relative)
    assert offences == []


def test_no_module_outside_the_engines_folder_names_a_specific_engine():
    offences = []
    for package in PACKAGES:
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
        for package in PACKAGES
        for path in python_files(package)
        if path.stat().st_size and ast.get_docstring(ast.parse(path.read_text())) is None
    ]
    assert missing == []


def test_task_names_are_written_only_in_the_broker_module():
    """A task name typed as a string could differ from the one the worker registers."""
    from core.broker import TASK_NAMES

    offences = []
    for package in ("core", "webapp", "workers", "bench", "tests"):
        # Tests may register tasks of their own, but they send ours by their constants.
        naming = SENDING if package == "tests" else SENDING | REGISTERING
        for path in python_files(package):
            relative = path.relative_to(ROOT).as_posix()
            if relative in ("core/broker.py", "tests/test_boundaries.py"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and called_name(node) in naming:
                    named = node.args[0] if node.args else keyword_value(node, "name")
                    if not is_broker_name(named):
                        offences.append(f"{relative}:{node.lineno}")
                elif isinstance(node, ast.Constant) and node.value in TASK_NAMES:
                    if package != "tests":
                        offences.append(f"{relative}:{node.lineno}: {node.value!r}")
    assert offences == []


SENDING = {"queue.enqueue", "queue.call"}
REGISTERING = {"celery.task"}


def called_name(call: ast.Call) -> str | None:
    """Return "name.attribute" for a call such as queue.enqueue(...), else None."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def is_broker_name(node: ast.expr | None) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "broker"
    )

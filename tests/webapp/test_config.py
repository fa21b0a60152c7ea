"""The settings table: help for every setting, validation sentences, defaults, the README table."""

import os
import subprocess
import sys

import pytest

from core.config import SETTINGS, ConfigError, load_config
from tests.support.processes import ROOT

NAMES = [setting.name for setting in SETTINGS]
MAIN = "import sys; from core.config import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("setting", SETTINGS, ids=NAMES)
def test_every_setting_has_one_line_of_help(setting):
    assert setting.help.strip(), f"{setting.name} has no help"
    assert "\n" not in setting.help
    assert setting.help.endswith(".")


@pytest.mark.parametrize("name", NAMES)
def test_every_setting_appears_in_the_readme(name):
    assert f"`{name}`" in (ROOT / "README.md").read_text()


def test_the_required_settings_are_all_in_the_table():
    required = {
        "DATABASE_URL",
        "REDIS_URL",
        "SECRET_KEY",
        "PUBLIC_URL",
        "HOST",
        "PORT",
        "APP_NAME",
        "ALLOW_PRIVATE_NETWORKS",
        "LOOKOUT_PLUGINS",
        "ATTACHMENT_MAX_BYTES",
        "CONTEXT_TOOL_CHARS",
        "TURN_MAX_STEPS",
        "EVENT_STREAM_TTL_SECONDS",
        "WORKER_CONCURRENCY",
        "LOG_LEVEL",
        "CELERY_QUEUE",
    }
    assert required <= set(NAMES)


def test_defaults_apply_when_the_environment_is_empty():
    values = load_config({"SECRET_KEY": "k"})
    assert values["PORT"] == 5000
    assert values["HOST"] == "127.0.0.1"
    assert values["PUBLIC_URL"] == "http://127.0.0.1:5000"
    assert values["ALLOW_PRIVATE_NETWORKS"] is False
    assert values["LOOKOUT_PLUGINS"] == ["tools.web_search", "tools.web_fetch", "tools.pdf"]
    assert values["ATTACHMENT_MAX_BYTES"] == 20 * 1024 * 1024
    assert values["CONTEXT_TOOL_CHARS"] == 60000
    assert values["TURN_MAX_STEPS"] == 10
    assert values["EVENT_STREAM_TTL_SECONDS"] == 600
    assert values["DATABASE_URL"].startswith("sqlite:///")
    assert values["DATABASE_URL"].endswith("instance/lookout.db")


@pytest.mark.parametrize(
    ("environ", "words"),
    [
        ({"PORT": "abc"}, ["PORT", "whole number between 1 and 65535", "'abc'"]),
        ({"PORT": "70000"}, ["PORT", "between 1 and 65535"]),
        ({"ALLOW_PRIVATE_NETWORKS": "maybe"}, ["ALLOW_PRIVATE_NETWORKS", "true", "false"]),
        ({"LOG_LEVEL": "LOUD"}, ["LOG_LEVEL", "DEBUG", "INFO"]),
        ({"REDIS_URL": "localhost:6379"}, ["REDIS_URL", "redis://"]),
        ({"TURN_MAX_STEPS": "0"}, ["TURN_MAX_STEPS", "between 1 and 1000"]),
        ({"SECRETS_KEY": "new,,old"}, ["SECRETS_KEY", "none empty"]),
        ({"SIGN_IN_MAX_FAILURES": "0"}, ["SIGN_IN_MAX_FAILURES", "between 1 and 1000"]),
        ({"WORKER_PROCESSES": "0"}, ["WORKER_PROCESSES", "between 1 and 256", "'0'"]),
        ({"METRICS_ALLOW": "127.0.0.1/8, office"}, ["METRICS_ALLOW", "10.0.0.0/8", "'office'"]),
        (
            {"PROMETHEUS_MULTIPROC_DIR": "/proc/no-such-folder"},
            ["PROMETHEUS_MULTIPROC_DIR", "create and write"],
        ),
    ],
)
def test_an_invalid_value_is_refused_with_a_sentence_naming_the_setting(environ, words):
    with pytest.raises(ConfigError) as error:
        load_config({"SECRET_KEY": "k", **environ})
    message = str(error.value)
    assert message.endswith(".")
    for word in words:
        assert word in message


def test_postgresql_urls_use_the_installed_psycopg_driver():
    values = load_config({"SECRET_KEY": "k", "DATABASE_URL": "postgresql://u@127.0.0.1/db"})
    assert values["DATABASE_URL"] == "postgresql+psycopg://u@127.0.0.1/db"


def test_public_url_follows_host_and_port():
    values = load_config({"SECRET_KEY": "k", "HOST": "::1", "PORT": "8080"})
    assert values["PUBLIC_URL"] == "http://[::1]:8080"


def test_worker_processes_default_to_the_cpus_this_process_may_use():
    values = load_config({"SECRET_KEY": "k"})
    assert values["WORKER_PROCESSES"] == len(os.sched_getaffinity(0))
    assert load_config({"SECRET_KEY": "k", "WORKER_PROCESSES": "3"})["WORKER_PROCESSES"] == 3


@pytest.mark.parametrize(
    ("concurrency", "processes", "threads"),
    [(32, 2, [16, 16]), (5, 2, [3, 2]), (7, 3, [3, 2, 2]), (4, 1, [4]), (1, 2, [1])],
)
def test_worker_concurrency_is_shared_among_the_worker_processes(concurrency, processes, threads):
    """./run's WORKER_CONCURRENCY counts threads in all, as before there were several processes;
    no process is started without a thread."""
    from core.config import worker_threads

    assert worker_threads(concurrency, processes) == threads


def test_the_secret_key_is_generated_once_and_kept(tmp_path):
    from core.config import find_secret_key

    first = find_secret_key(tmp_path)
    assert len(first) == 64
    assert find_secret_key(tmp_path) == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_the_flask_command_stops_with_the_sentence_on_invalid_config():
    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "webapp", "routes"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PORT": "abc", "SECRET_KEY": "k"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "PORT must be a whole number between 1 and 65535, not 'abc'." in result.stderr


def test_the_export_command_validates_and_prints_shell_assignments():
    ok = subprocess.run(
        [sys.executable, "-c", MAIN, "--export", "PORT", "HOST"],
        cwd=ROOT,
        env={"PORT": "8123", "SECRET_KEY": "k"},
        capture_output=True,
        text=True,
    )
    assert ok.stdout.splitlines() == ["export PORT=8123", "export HOST=127.0.0.1"]
    bad = subprocess.run(
        [sys.executable, "-c", MAIN, "--export", "PORT"],
        cwd=ROOT,
        env={"PORT": "abc", "SECRET_KEY": "k"},
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert "Lookout cannot start: PORT must be a whole number" in bad.stderr


def test_the_readme_table_is_the_generated_one():
    from core.config import markdown_table

    assert markdown_table() in (ROOT / "README.md").read_text()


# Run in a fresh interpreter whose instance folder is argv[1]: imports celeryconfig, every module
# of core, webapp and workers, and the workers' Celery app with its task modules.
IMPORT_ALL = """
import importlib, pkgutil, sys
from pathlib import Path
import core.config
core.config.INSTANCE_DIR = Path(sys.argv[1])
import celeryconfig
import core, webapp, workers
for package in (webapp, workers):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(module.name)
from workers.celery_app import celery
celery.loader.import_default_modules()
celery.tasks
"""


def run_python(code: str, instance_dir, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, str(instance_dir)],
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_importing_celeryconfig_and_every_module_writes_nothing(tmp_path):
    """Regression: importing celeryconfig created instance/secret_key (issue 13)."""
    instance_dir, cwd = tmp_path / "instance", tmp_path / "cwd"
    cwd.mkdir()
    result = run_python(IMPORT_ALL, instance_dir, cwd)
    assert result.returncode == 0, result.stderr
    assert not instance_dir.exists()
    assert list(cwd.iterdir()) == []


def test_the_app_still_creates_its_secret_key_when_it_starts(tmp_path):
    instance_dir = tmp_path / "instance"
    start = (
        "import sys; from pathlib import Path; import core.config\n"
        "core.config.INSTANCE_DIR = Path(sys.argv[1])\n"
        "from webapp import create_app\n"
        f"app = create_app({{'DATABASE_URL': 'sqlite:///{tmp_path}/lookout.db'}})\n"
        "print(app.config['SECRET_KEY'])"
    )
    result = run_python(start, instance_dir, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (instance_dir / "secret_key").read_text()
    assert len(result.stdout.strip()) == 64

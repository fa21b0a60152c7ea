"""Every Lookout setting with its default and one line of help; the only reader of os.environ.

Errors: `ConfigError` (a sentence naming the setting and what is valid) stops start-up.

`main(["--markdown"])` prints the README table; `main(["--export", NAME, ...])` validates every
setting and prints shell assignments (./run uses it).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
INSTANCE_DIR = ROOT / "instance"

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class ConfigError(ValueError):
    """An environment setting has a value Lookout cannot use; the message names it."""


def parse_text(name: str, raw: str) -> str:
    """Return the raw text, refusing an empty value."""
    if not raw.strip():
        raise ConfigError(f"{name} must not be empty; unset it to use the default.")
    return raw.strip()


def parse_passphrases(name: str, raw: str) -> str:
    """Return a comma-separated list of passphrases, refusing an empty one."""
    passphrases = [part.strip() for part in raw.split(",")]
    if not all(passphrases):
        raise ConfigError(
            f"{name} must be one passphrase, or several separated by commas with none empty; "
            "unset it to use SECRET_KEY."
        )
    return ", ".join(passphrases)


def parse_bool(name: str, raw: str) -> bool:
    """Return a boolean from the usual words for yes and no."""
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(f"{name} must be one of 1, true, yes, on, 0, false, no or off, not {raw!r}.")


def int_parser(low: int, high: int | None = None) -> Callable[[str, str], int]:
    """Return a parser of whole numbers between low and high (inclusive)."""

    def parse(name: str, raw: str) -> int:
        span = f"at least {low}" if high is None else f"between {low} and {high}"
        try:
            value = int(raw.strip())
        except ValueError:
            raise ConfigError(f"{name} must be a whole number {span}, not {raw!r}.") from None
        if value < low or (high is not None and value > high):
            raise ConfigError(f"{name} must be a whole number {span}, not {raw!r}.")
        return value

    return parse


def parse_list(name: str, raw: str) -> list[str]:
    """Return the comma-separated items, blanks dropped."""
    return [item.strip() for item in raw.split(",") if item.strip()]


def parse_url(name: str, raw: str) -> str:
    """Return a URL that has a scheme."""
    value = parse_text(name, raw)
    if "://" not in value:
        raise ConfigError(f"{name} must be a URL such as scheme://host/..., not {raw!r}.")
    return value


def parse_database_url(name: str, raw: str) -> str:
    """Return an SQLAlchemy URL, pointing plain postgresql:// at the installed psycopg 3 driver."""
    value = parse_url(name, raw)
    for prefix in ("postgres://", "postgresql://"):
        if value.startswith(prefix):
            return "postgresql+psycopg://" + value[len(prefix) :]
    return value


def parse_redis_url(name: str, raw: str) -> str:
    """Return a redis:// or rediss:// URL."""
    value = raw.strip()
    if not value.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"{name} must start with redis://, rediss:// or unix://, not {raw!r}.")
    return value


def parse_networks(name: str, raw: str) -> list[str]:
    """Return comma-separated IP networks (CIDRs; a bare address is one host), normalised."""
    networks = []
    for item in parse_list(name, raw):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError:
            raise ConfigError(
                f"{name} must list networks such as 127.0.0.1/32 or 10.0.0.0/8, separated by "
                f"commas; {item!r} is not one."
            ) from None
    return networks


def parse_folder(name: str, raw: str) -> str:
    """Return a folder's path, creating the folder when missing; refuse one Lookout cannot write."""
    path = Path(parse_text(name, raw))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"{name} must be a folder Lookout can create and write; {raw!r} could not be "
            f"created ({error.strerror})."
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{name} must be a folder Lookout can write; {raw!r} is not writable.")
    return str(path)


def parse_log_level(name: str, raw: str) -> str:
    """Return an upper-case logging level name."""
    value = raw.strip().upper()
    if value not in LOG_LEVELS:
        raise ConfigError(f"{name} must be one of {', '.join(LOG_LEVELS)}, not {raw!r}.")
    return value


@dataclass(frozen=True)
class Setting:
    """One environment setting: its name, default (text, as in the environment), help and parser."""

    name: str
    default: str | None
    help: str
    parse: Callable[[str, str], Any] = parse_text

    def format(self, value: Any) -> str:
        """Return the value written back as environment text."""
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, list):
            return ",".join(value)
        return str(value)


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "DATABASE_URL",
        None,
        "SQL database; default: an SQLite file instance/lookout.db; "
        "postgresql://user@host/db for production.",
        parse_database_url,
    ),
    Setting(
        "DATABASE_POOL_SIZE",
        "10",
        "Database connections each web or worker process keeps open, with as many again opened "
        "under load; turns hold one only while they read or write.",
        int_parser(1, 1000),
    ),
    Setting(
        "REDIS_URL",
        "redis://127.0.0.1:6379/0",
        "Redis for the Celery broker, results and "
        "turn events; ./run starts its own Redis when this is unset.",
        parse_redis_url,
    ),
    Setting(
        "CELERY_QUEUE",
        "lookout",
        "Name of the Celery queue the web side sends to and "
        "workers consume; tests use a unique one.",
        parse_text,
    ),
    Setting(
        "SECRET_KEY",
        None,
        "Key that signs sessions; default: generated once and kept in instance/secret_key.",
        parse_text,
    ),
    Setting(
        "SECRETS_KEY",
        None,
        "Passphrase that encrypts stored API keys and plugin settings; default: SECRET_KEY. "
        "Comma-separated: the first encrypts, all decrypt (list the old one second to rotate).",
        parse_passphrases,
    ),
    Setting(
        "TRUSTED_PROXIES",
        "0",
        "How many proxies in front of Lookout set X-Forwarded-For/-Proto (1 behind one TLS "
        "proxy); their headers give the client address. 0 trusts none.",
        int_parser(0, 10),
    ),
    Setting(
        "HOST",
        "127.0.0.1",
        "Address ./run's web server listens on (your own gunicorn listens where --bind says).",
        parse_text,
    ),
    Setting(
        "PORT",
        "5000",
        "Port ./run's web server listens on (your own gunicorn listens where --bind says).",
        int_parser(1, 65535),
    ),
    Setting(
        "PUBLIC_URL",
        None,
        "Address people use to reach Lookout; default: http://HOST:PORT.",
        parse_url,
    ),
    Setting("APP_NAME", "Lookout", "Name shown in pages and sent to plugins.", parse_text),
    Setting(
        "ALLOW_PRIVATE_NETWORKS",
        "0",
        "Let tools fetch loopback and private addresses (switches the network guard off).",
        parse_bool,
    ),
    Setting(
        "LOOKOUT_PLUGINS",
        "tools.web_search,tools.web_fetch,tools.pdf",
        "Comma-separated module paths of the plugins to load.",
        parse_list,
    ),
    Setting(
        "MCP_STDIO_ALLOWED",
        "0",
        "Let admins add MCP servers that run as a command (over stdio) on the worker hosts.",
        parse_bool,
    ),
    Setting(
        "MCP_CALL_SECONDS",
        "60",
        "Seconds one call to an MCP server's tool may take before it is stopped.",
        int_parser(1, 3600),
    ),
    Setting(
        "MCP_REFRESH_SECONDS",
        "600",
        "Age in seconds at which an MCP server's stored tool list is listed again.",
        int_parser(10, 7 * 24 * 3600),
    ),
    Setting(
        "ATTACHMENT_MAX_BYTES",
        str(20 * 1024 * 1024),
        "Largest file a user may attach, in bytes.",
        int_parser(1),
    ),
    Setting(
        "JSON_MAX_BYTES",
        str(1024 * 1024),
        "Largest JSON request body the API reads, in bytes (uploads have their own limit).",
        int_parser(1),
    ),
    Setting(
        "PARSER_PROCESSES",
        "2",
        "Parser processes each web and worker process keeps for pages and files from outside.",
        int_parser(1, 64),
    ),
    Setting(
        "PARSER_CPU_SECONDS",
        "10",
        "CPU seconds one page extraction or file ingest may use before its process is killed.",
        int_parser(1, 3600),
    ),
    Setting(
        "PARSER_MEMORY_MB",
        "1024",
        "Address space of one parser process, in MiB; a file needing more is refused.",
        int_parser(256, 1024 * 1024),
    ),
    Setting(
        "PARSER_MAX_CHARS",
        "2000000",
        "Characters of text one page or file may yield; the rest is cut, saying so.",
        int_parser(1000),
    ),
    Setting(
        "PARSER_QUEUE_SECONDS",
        "30",
        "Seconds a page or file may wait for a parser process, shared fairly among users, "
        "before it is refused.",
        int_parser(1, 3600),
    ),
    Setting(
        "UPLOAD_PARSE_SECONDS",
        "30",
        "Seconds an attachment may take to read before the upload is refused.",
        int_parser(1, 3600),
    ),
    Setting(
        "TOOL_CALLS_PER_STEP",
        "8",
        "Tool calls one model step may make; calls past it get an error result the model reads.",
        int_parser(1, 1000),
    ),
    Setting(
        "QUOTA_OPEN_TURNS",
        "3",
        "Answers one user may have queued or running at once (a user's override on the Users "
        "page wins).",
        int_parser(1, 10000),
    ),
    Setting(
        "QUOTA_MCP_CALLS",
        "4",
        "Tool calls one user's programs may have running at once through Lookout's MCP server "
        "(a user's override on the Users page wins).",
        int_parser(1, 10000),
    ),
    Setting(
        "QUOTA_TURNS_PER_HOUR",
        "120",
        "Messages one user may send in a clock hour (UTC).",
        int_parser(1, 1_000_000),
    ),
    Setting(
        "QUOTA_TOOL_CALLS_PER_TURN",
        "40",
        "Tool calls one answer may make, over all its steps; calls past it get an error result.",
        int_parser(1, 100_000),
    ),
    Setting(
        "QUOTA_SEARCHES_PER_DAY",
        "500",
        "Web searches one user may make a day (UTC) on the admin's engine key; searches with "
        "the user's own key are not counted.",
        int_parser(1, 10_000_000),
    ),
    Setting(
        "QUOTA_FETCH_MB_PER_DAY",
        "500",
        "Megabytes of pages and files (decoded) web_fetch may read for one user a day (UTC).",
        int_parser(1, 10_000_000),
    ),
    Setting(
        "QUOTA_EVENT_STREAMS",
        "20",
        "Event streams one user may have open; a new one past it closes the user's oldest.",
        int_parser(1, 10000),
    ),
    Setting(
        "QUOTA_UPLOAD_MB",
        "500",
        "Megabytes of attachments one user may keep stored; each counts the larger of its "
        "file's bytes and its text's characters.",
        int_parser(1, 10_000_000),
    ),
    Setting(
        "QUOTA_UPLOADS_PER_HOUR",
        "60",
        "Files one user may upload in a clock hour (UTC), counted before any is read.",
        int_parser(1, 1_000_000),
    ),
    Setting(
        "ABANDONED_MAX",
        "8",
        "Tool threads still running after their call ended above which a worker takes no task.",
        int_parser(0, 10000),
    ),
    Setting(
        "CONTEXT_TOOL_CHARS",
        "60000",
        "Characters of tool results one prompt may carry before the oldest are replaced by a note.",
        int_parser(1000),
    ),
    Setting("TURN_MAX_STEPS", "10", "Most model steps one turn may take.", int_parser(1, 1000)),
    Setting(
        "MODEL_TIMEOUT_SECONDS",
        "60",
        "Seconds a model may take to start its answer (keep-alive pings do not count), or stay "
        "silent between two tokens, before its turn fails (keeping what it said).",
        int_parser(1, 3600),
    ),
    Setting(
        "MODEL_ANSWER_SECONDS",
        "600",
        "Seconds one model answer may take in all, however steadily it streams, before its "
        "turn fails (keeping what it said).",
        int_parser(1, 86400),
    ),
    Setting(
        "TURN_STALE_SECONDS",
        "60",
        "A running turn whose worker sent no heartbeat for this long is failed by the reaper.",
        int_parser(2, 86400),
    ),
    Setting(
        "TURN_QUEUE_WAIT_SECONDS",
        "600",
        "A turn whose next task (its first step too) waited this long in the queue (no worker "
        "free to take it) is failed as too busy; meanwhile the reaper sends again a task lost.",
        int_parser(2, 86400),
    ),
    Setting(
        "DATABASE_RETRY_SECONDS",
        "60",
        "How long a step or tool call runs again while the database does not answer (after 1, "
        "2, 4, 8, then every 10 s) before it gives up and leaves its turn to the reaper.",
        int_parser(1, 86400),
    ),
    Setting(
        "SIGN_IN_MAX_FAILURES",
        "5",
        "Failed sign-ins a name may have within SIGN_IN_LOCK_MINUTES before it is refused.",
        int_parser(1, 1000),
    ),
    Setting(
        "SIGN_IN_MAX_FAILURES_PER_ADDRESS",
        "50",
        "Failed sign-ins, for any names, one client address may have within SIGN_IN_LOCK_MINUTES.",
        int_parser(1, 100000),
    ),
    Setting(
        "SIGN_IN_LOCK_MINUTES",
        "15",
        "How long failed sign-ins count, and a name that had too many is refused.",
        int_parser(1, 24 * 60),
    ),
    Setting(
        "PASSWORD_MIN_LENGTH",
        "8",
        "Fewest characters a new password may have (set in Settings, on the Users page or with "
        "flask users).",
        int_parser(1, 1000),
    ),
    Setting(
        "REAPER_INTERVAL_SECONDS",
        "15",
        "How often one of the workers looks for running turns whose worker died.",
        int_parser(1, 3600),
    ),
    Setting(
        "EVENT_STREAM_TTL_SECONDS",
        "600",
        "How long a finished turn's event stream stays in Redis for reconnecting pages.",
        int_parser(1),
    ),
    Setting(
        "EVENT_STREAMS_PER_PROCESS",
        "4000",
        "Event streams one web process serves at once; past it a new one is refused with 503 "
        "and Retry-After (each open stream is one socket, a few kilobytes, and no thread).",
        int_parser(1, 1_000_000),
    ),
    Setting(
        "WORKER_CONCURRENCY",
        "32",
        "Steps and tool calls ./run's workers run at once, in all: threads shared as evenly as "
        "can be among its WORKER_PROCESSES processes (turns are I/O bound).",
        int_parser(1, 10000),
    ),
    Setting(
        "WORKER_PROCESSES",
        None,
        "Celery worker processes ./run starts (fewer when WORKER_CONCURRENCY is smaller); "
        "default: one per CPU Lookout may use, as one process runs Python on one core at a time.",
        int_parser(1, 256),
    ),
    Setting(
        "METRICS_TOKEN",
        None,
        "Bearer token a Prometheus scraper sends to read /metrics; /metrics answers 404 while "
        "this and METRICS_ALLOW are unset.",
        parse_text,
    ),
    Setting(
        "METRICS_ALLOW",
        None,
        "Comma-separated networks (CIDRs, such as 127.0.0.1/32) that may read /metrics "
        "without the token.",
        parse_networks,
    ),
    Setting(
        "PROMETHEUS_MULTIPROC_DIR",
        None,
        "Folder where web and worker processes keep their metrics for /metrics to add up; "
        "./run uses var/metrics/$PORT and empties it at start. Unset: each process shows its own.",
        parse_folder,
    ),
    Setting(
        "LOG_LEVEL",
        "INFO",
        "Logging level: DEBUG, INFO, WARNING, ERROR or CRITICAL. The workers' health pings "
        "(every few seconds) are logged at DEBUG only.",
        parse_log_level,
    ),
)

SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}


def find_secret_key(instance_dir: Path | None = None) -> str:
    """Return the key kept in instance/secret_key (or instance_dir), creating it on first use."""
    instance_dir = INSTANCE_DIR if instance_dir is None else instance_dir
    path = instance_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    instance_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(key)
    return key


def load_settings(
    environ: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return every setting from overrides or the environment; raise ConfigError naming a bad one.

    Writes nothing: an unset SECRET_KEY stays None (load_config fills it). Overrides (from
    tests) may be text, which is parsed, or already-parsed values.
    """
    environ = os.environ if environ is None else environ
    overrides = overrides or {}
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        if setting.name in overrides and not isinstance(overrides[setting.name], str):
            values[setting.name] = overrides[setting.name]
            continue
        raw = overrides.get(setting.name, environ.get(setting.name))
        if raw is None or (raw == "" and setting.default is None):
            raw = setting.default
        values[setting.name] = None if raw is None else setting.parse(setting.name, raw)
    if values["DATABASE_URL"] is None:
        values["DATABASE_URL"] = f"sqlite:///{INSTANCE_DIR / 'lookout.db'}"
    if values["WORKER_PROCESSES"] is None:
        values["WORKER_PROCESSES"] = usable_cpus()
    if values["PUBLIC_URL"] is None:
        host = values["HOST"]
        host = f"[{host}]" if ":" in host else host
        values["PUBLIC_URL"] = f"http://{host}:{values['PORT']}"
    return values


def usable_cpus() -> int:
    """Return how many CPUs this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0))


def worker_threads(concurrency: int, processes: int) -> list[int]:
    """Return the threads of each worker process ./run starts: ``concurrency`` in all, as even
    as can be over ``processes``, and no process without a thread (so fewer processes when
    ``concurrency`` is smaller)."""
    count = min(concurrency, processes)
    share, extra = divmod(concurrency, count)
    return [share + (index < extra) for index in range(count)]


def load_config(
    environ: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return load_settings' values with SECRET_KEY filled from instance/secret_key, which is
    created on first use; for the app as it starts, never for a module as it is imported."""
    values = load_settings(environ, overrides)
    if values["SECRET_KEY"] is None:
        made_now = not (INSTANCE_DIR / "secret_key").exists()
        values["SECRET_KEY"] = find_secret_key()
        values["SECRET_KEY_MADE_NOW"] = made_now  # migrations refuse to encrypt with such a key
    return values


def prepare_metrics_folder() -> str | None:
    """Return PROMETHEUS_MULTIPROC_DIR, its folder made ready, or None when unset.

    prometheus-client writes its files there from the moment a series is defined, which in a
    worker is at import, before any app reads its settings: a missing folder would crash it.
    """
    raw = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    return parse_folder("PROMETHEUS_MULTIPROC_DIR", raw) if raw else None


def to_environ(values: Mapping[str, Any]) -> dict[str, str]:
    """Return the settings among values written as environment text (for child processes)."""
    return {
        setting.name: setting.format(values[setting.name])
        for setting in SETTINGS
        if values.get(setting.name) is not None
    }


def configure_logging(level: str) -> None:
    """Set the root logger's level and a plain format, once per process."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Alembic announces each of its plugins at INFO whenever an app is created: noise.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # httpx (the openai SDK's and MCP's client) logs every request at INFO: a line a model step.
    logging.getLogger("httpx2").setLevel(logging.WARNING)


def markdown_table() -> str:
    """Return the settings as the README's Markdown table."""
    lines = ["| Setting | Default | What it does |", "| --- | --- | --- |"]
    for setting in SETTINGS:
        default = "—" if setting.default is None else f"`{setting.default}`"
        lines.append(f"| `{setting.name}` | {default} | {setting.help} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Print the Markdown table, or validate and print shell assignments; return the exit code."""
    if argv[:1] == ["--markdown"]:
        print(markdown_table())
        return 0
    if argv[:1] == ["--export"]:
        try:
            values = load_config()
        except ConfigError as error:
            print(f"Lookout cannot start: {error}", file=sys.stderr)
            return 2
        environ = to_environ(values)
        for name in argv[1:]:
            print(f"export {name}={shlex.quote(environ[name])}")
        return 0
    print("usage: main([--markdown | --export NAME...])", file=sys.stderr)
    return 2

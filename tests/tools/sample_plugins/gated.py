"""A plugin whose ingester reads a file only once the test opens its gate: slow parses on cue.

The file's bytes name a directory and a job (``<directory>\\n<name>``). In its parser process
the ingester writes ``started-<name>`` there, then waits (sleeping, so no CPU is spent) until
``open-<name>`` exists, and answers ``read <name>``. Tests count those files, not seconds.
"""

import time
from pathlib import Path

from marshmallow import Schema

from tools.api import Ingester, IngestResult, Plugin

MIME_TYPE = "application/x-lookout-gated"
# How long a gate may stay shut before the ingester gives up (a test that failed half-way).
GIVE_UP_SECONDS = 60


class Empty(Schema):
    pass


def gated_file(directory: Path, name: str) -> bytes:
    """Return the bytes of a gated file: read once ``open_gate(directory, name)`` is called."""
    return f"{directory}\n{name}".encode()


def open_gate(directory: Path, name: str) -> None:
    """Let the gated file ``name`` be read."""
    (directory / f"open-{name}").touch()


def started(directory: Path) -> list[str]:
    """Return the names of the gated files whose reading has started."""
    return sorted(p.name.removeprefix("started-") for p in directory.glob("started-*"))


def read_when_open(file) -> IngestResult:
    directory, name = file.data.decode().split("\n")
    folder = Path(directory)
    (folder / f"started-{name}").touch()
    for _ in range(GIVE_UP_SECONDS * 100):
        if (folder / f"open-{name}").exists():
            return IngestResult(f"read {name}")
        time.sleep(0.01)
    return IngestResult(f"gave up on {name}")


def setup(ctx):
    ctx.ingesters.register(Ingester("gated", 5, lambda mime: mime == MIME_TYPE, read_when_open))


plugin = Plugin(id="gated", options_schema=Empty, setup=setup)

"""A plugin whose ingester reads a file only once the test opens its gate: slow parses on cue.

The file's bytes name a directory and a job (``<directory>\\n<name>``). In its parser process
the ingester writes ``started-<directory's name>--<name>`` in its temporary directory, then
waits (sleeping, so no CPU is spent) until ``open-…`` exists there, and answers ``read <name>``.
A sandboxed parser process may write nowhere but its private directory (``tools.sandbox``), so
that is where the files are: the test, which may look anywhere, finds them in the private
directories of its own parser processes (``lookout-parser-<its pid>-*``), and in ``directory``
for in-process parsing. Tests count those files, not seconds.
"""

import os
import tempfile
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
    """Let the gated file ``name`` be read (by whichever parser process takes it)."""
    for place in _places(directory):
        (place / _marker("open", directory, name)).touch()


def started(directory: Path) -> list[str]:
    """Return the names of the gated files whose reading has started."""
    prefix = _marker("started", directory, "")
    found = (p for place in _places(directory) for p in place.glob(f"{prefix}*"))
    return sorted(p.name.removeprefix(prefix) for p in found)


def _marker(what: str, directory: str | Path, name: str) -> str:
    # A private directory outlives a test (its pool is shared): the marker names the test's too.
    return f"{what}-{Path(directory).name}--{name}"


def _places(directory: Path) -> list[Path]:
    private = Path(tempfile.gettempdir()).glob(f"lookout-parser-{os.getpid()}-*")
    return [directory, *private]


def read_when_open(file) -> IngestResult:
    directory, name = file.data.decode().split("\n")
    # In a parser process the temporary directory is its private one; in-process, the test's.
    private = Path(tempfile.gettempdir())
    folder = private if private.name.startswith("lookout-parser-") else Path(directory)
    (folder / _marker("started", directory, name)).touch()
    for _ in range(GIVE_UP_SECONDS * 100):
        if (folder / _marker("open", directory, name)).exists():
            return IngestResult(f"read {name}")
        time.sleep(0.01)
    return IngestResult(f"gave up on {name}")


def setup(ctx):
    ctx.ingesters.register(Ingester("gated", 5, lambda mime: mime == MIME_TYPE, read_when_open))


plugin = Plugin(id="gated", options_schema=Empty, setup=setup)

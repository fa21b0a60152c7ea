"""Running the pages' plain JavaScript functions in Node, for unit tests without a browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "webapp" / "static"


def run_node(module: str, function: str, inputs: list, time_zone: str | None = None) -> list:
    """Return [module.function(*args) for args in inputs], computed in Node (in `time_zone`,
    an IANA name, when given)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the Chromium tests cover the page scripts")
    script = (
        "const m = require(process.argv[1]);"
        "const inputs = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        f"process.stdout.write(JSON.stringify(inputs.map(args => m.{function}(...args))));"
    )
    done = subprocess.run(
        [node, "-e", script, str(STATIC / module)],
        input=json.dumps(inputs),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        env={**os.environ, "TZ": time_zone} if time_zone else None,
    )
    return json.loads(done.stdout)

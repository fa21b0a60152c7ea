"""Python runs this at start in every process whose PYTHONPATH lists this folder first: the
test's loopback guard (tests/support/loopback.py) goes in before any of the program's code."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.support.loopback import install_from_environment  # noqa: E402

install_from_environment()
sys.path.pop(0)

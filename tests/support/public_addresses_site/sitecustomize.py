"""Python runs this at start in every process whose PYTHONPATH lists this folder first: the
addresses a test named public (tests/support/public_addresses.py) are taken as such."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tests.support.public_addresses import install_from_environment  # noqa: E402

install_from_environment()
sys.path.pop(0)

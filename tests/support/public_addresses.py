"""Addresses a test's processes take for public ones: the guarded fetch's policy, widened.

A multi-host test serves its pages on private addresses that exist only inside the namespaces
it made (tests/support/hosts.py), and the workers reaching them are other processes, so the
policy cannot be passed to ``GuardedSession`` as in-process tests do. ``environ()`` makes every
Python process started with it run ``public_addresses_site/sitecustomize.py`` first, which
widens ``tools.addresses``' policy to accept the listed addresses; every other address is
judged as before.
"""

from __future__ import annotations

import os
from pathlib import Path

SITE_DIR = Path(__file__).resolve().parent / "public_addresses_site"
VARIABLE = "LOOKOUT_TEST_PUBLIC_ADDRESSES"


def environ(base: dict[str, str], addresses: list[str]) -> dict[str, str]:
    """Return ``base`` with ``addresses`` taken as public in every Python process started."""
    paths = [str(SITE_DIR), *filter(None, [base.get("PYTHONPATH")])]
    return {**base, "PYTHONPATH": os.pathsep.join(paths), VARIABLE: ",".join(addresses)}


def install_from_environment() -> None:
    """Widen the policy to the addresses of ``LOOKOUT_TEST_PUBLIC_ADDRESSES``, when set."""
    listed = {a for a in os.environ.get(VARIABLE, "").split(",") if a}
    if not listed:
        return
    from tools import addresses

    judge = addresses.find_refusal_reason

    def find_refusal_reason(ip: str) -> str | None:
        return None if ip in listed else judge(ip)

    # address_allowed and the guard's warnings look this up at call time.
    addresses.find_refusal_reason = find_refusal_reason

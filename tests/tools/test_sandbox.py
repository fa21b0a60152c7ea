"""The parser sandbox, probed from inside real parser processes started the way production does.

Each probe is a job sent through a ``ParserPool``: it runs in a child after ``tools.sandbox``
has confined it, and reports what code run by a parser bug could do there.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import pwd
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.api import Signal
from tools.parsers import ParserLimits, ParserPool, ParserStopped

# Set in the test process at collection, before its first parser process starts, like a key in
# a worker's environment (a parser process importing this module to run a probe sets nothing).
SECRET = "sk-lookout-sandbox-test-0123456789"
if multiprocessing.parent_process() is None:
    os.environ["LOOKOUT_SANDBOX_TEST_API_KEY"] = SECRET


@pytest.fixture(scope="module")
def pool() -> Iterator[ParserPool]:
    parsers = ParserPool(ParserLimits(processes=1, cpu_seconds=10))
    yield parsers
    parsers.close()


def probe(pool: ParserPool, job, *args):
    return pool.run(job, *args, signal=Signal.after(60), what="the probe")


def connect_to(port: int) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return "connected"
    except OSError as exc:
        return f"refused: {exc}"


def test_a_parser_cannot_reach_a_listening_loopback_server(pool):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        assert connect_to(port) == "connected"  # from here, it listens
        server.accept()[0].close()
        assert probe(pool, connect_to, port).startswith("refused")
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing came in from the parser


def environment() -> dict[str, object]:
    # /proc/self/environ is root's to read once the process changed its user: read the block
    # where the kernel says it is (/proc/self/stat, fields 50 and 51), as code in it could.
    with open("/proc/self/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])
    raw = ctypes.string_at(start, end - start)
    return {"environ": dict(os.environ), "raw": raw.strip(b"\0").decode("latin-1")}


def test_a_parser_has_none_of_the_workers_environment(pool):
    seen = probe(pool, environment)
    assert "LOOKOUT_SANDBOX_TEST_API_KEY" not in seen["environ"]
    assert set(seen["environ"]) == {"LANG", "LC_ALL", "PATH", "HOME", "TMPDIR"}
    assert SECRET not in str(seen)
    assert seen["raw"] == ""  # the block the process started with is wiped too


def open_descriptors() -> dict[str, str]:
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            fds[name] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed by now
    return fds


def test_a_parser_holds_no_descriptor_but_its_pipe_and_standard_error(pool):
    with open(__file__, "rb"):  # a file open in the worker
        fds = probe(pool, open_descriptors)
    assert fds["0"] == fds["1"] == "/dev/null"
    others = {fd: target for fd, target in fds.items() if int(fd) > 2}
    assert len(others) == 1, others  # the pipe to the parent
    assert next(iter(others.values())).startswith("socket:")


def start_processes() -> list[str]:
    refusals = []
    try:
        pid = os.fork()
    except OSError as exc:
        refusals.append(f"fork: {exc}")
    else:
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    try:
        subprocess.run(["true"], check=False)
    except OSError as exc:
        refusals.append(f"subprocess: {exc}")
    return refusals


def test_a_parser_cannot_start_a_process(pool):
    refusals = probe(pool, start_processes)
    assert [r.split(":")[0] for r in refusals] == ["fork", "subprocess"]


def write_files(outside: str) -> dict[str, str]:
    results = {}
    for name, directory in (("outside", outside), ("private", tempfile.gettempdir())):
        try:
            Path(directory, "written-by-a-parser").write_text("x")
            results[name] = "written"
        except OSError as exc:
            results[name] = f"refused: {exc.strerror}"
    return results


def test_a_parser_writes_only_in_its_private_directory():
    outside = tempfile.mkdtemp(prefix="lookout-sandbox-test-")
    os.chmod(outside, 0o777)  # anyone may write there: only the sandbox can refuse it
    parsers = ParserPool(ParserLimits(processes=1))
    try:
        results = probe(parsers, write_files, outside)
        assert results["outside"].startswith("refused")
        assert results["private"] == "written"
        assert os.listdir(outside) == []
    finally:
        parsers.close()
        os.rmdir(outside)


def identity() -> dict[str, object]:
    try:
        os.setuid(0)
        regained = "root again"
    except OSError as exc:
        regained = f"refused: {exc.strerror}"
    return {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "root": regained}


@pytest.mark.skipif(os.geteuid() != 0, reason="the worker is not root here: nothing to drop")
def test_a_parser_of_a_root_worker_runs_as_nobody_and_cannot_become_root_again(pool):
    nobody = pwd.getpwnam("nobody")
    seen = probe(pool, identity)
    assert (seen["uid"], seen["gid"], seen["groups"]) == (nobody.pw_uid, nobody.pw_gid, [])
    assert seen["root"].startswith("refused")


class RunInParent:
    """A pickle that, loaded, creates a file: what a hostile parser would send to its parent."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def send_raw(frame: bytes) -> str:
    """Write a frame to the parent by hand, past the reply code: to every socket held."""
    for fd, target in open_descriptors().items():
        if int(fd) > 2 and target.startswith("socket:"):
            try:
                os.write(int(fd), frame)
            except OSError:
                continue  # not the pipe (a listening socket, before the sandbox)
    return "sent"


def framed(payload: bytes) -> bytes:
    return struct.pack("!i", len(payload)) + payload


def test_a_pickle_sent_by_a_parser_is_never_loaded_by_the_worker(pool, tmp_path):
    marker = tmp_path / "ran-in-the-worker"
    exploit = pickle.dumps(("ok", RunInParent(str(marker)), False, 0))
    with pytest.raises(ParserStopped) as error:
        pool.run(send_raw, framed(exploit), signal=Signal.after(60), what="page.html")
    assert error.value.message == "Reading page.html failed: Lookout's reader stopped on it."
    assert not marker.exists()
    assert probe(pool, connect_to, 1).startswith("refused")  # a new parser took its place


def test_a_reply_longer_than_the_limit_is_refused_before_it_is_read(pool):
    with pytest.raises(ParserStopped):
        pool.run(send_raw, struct.pack("!i", 0x7FFFFFF0), signal=Signal.after(30), what="page.html")


def answer(value: object) -> object:
    return value


def test_a_reply_of_the_wrong_shape_is_refused():
    """A job declared to return text that answers with a list is a parser not to be trusted."""
    parsers = ParserPool(ParserLimits(processes=1))
    try:
        assert parsers.run(text_of, "fine", signal=Signal.after(30), what="x") == "fine"
        with pytest.raises(ParserStopped):
            parsers.run(text_of, ["not", "text"], signal=Signal.after(30), what="x")
    finally:
        parsers.close()


def text_of(value: object) -> str:
    return value  # type: ignore[return-value]


def test_what_the_sandbox_cannot_enforce_is_logged_as_a_warning(pool, caplog):
    probe(pool, answer, 1)
    fresh = ParserPool(ParserLimits(processes=1))
    try:
        with caplog.at_level("WARNING", logger="lookout.parsers"):
            probe(fresh, answer, 1)
    finally:
        fresh.close()
    logged = {r.getMessage() for r in caplog.records}
    assert logged == {f"parser sandbox: {sentence}" for sentence in fresh.sandbox_missing}


def decode_rare_charset(data: bytes) -> str:
    return data.decode("koi8_u")  # its codec module is imported on first use, in the sandbox


def test_a_parser_as_nobody_still_imports_a_codec_on_first_use(pool):
    """Python lives under /root here, which only root may enter: a parser dropped to nobody
    could not import a page's codec until the sandbox bound Python's directories in."""
    assert probe(pool, decode_rare_charset, "Привіт".encode("koi8_u")) == "Привіт"


# Run in a fresh interpreter whose own seccomp filter plays a kernel (or a container's profile)
# without landlock (ENOSYS) and without namespaces (unshare: EPERM); its parser processes
# inherit that filter. It prints what the pool logged and what a parser could do.
WEAKER_KERNEL = """
import ctypes, json, logging, socket, struct, sys
from tests.tools.test_sandbox import connect_to
from tools.api import Signal
from tools.parsers import ParserLimits, ParserPool

program = b"".join(struct.pack("=HBBI", *op) for op in [
    (0x20, 0, 0, 0),                    # load the system call's number
    (0x15, 2, 0, 444),                  # landlock_create_ruleset: ENOSYS
    (0x15, 2, 0, 272),                  # unshare: EPERM
    (0x06, 0, 0, 0x7FFF0000),           # anything else: allowed
    (0x06, 0, 0, 0x00050000 | 38),
    (0x06, 0, 0, 0x00050000 | 1),
])
buffer = ctypes.create_string_buffer(program)
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(38, 1, 0, 0, 0)
assert libc.prctl(22, 2, struct.pack("HxxxxxxP", 6, ctypes.addressof(buffer)), 0, 0) == 0
logging.basicConfig(stream=sys.stdout, format="%(levelname)s %(message)s")
if __name__ == "__main__":
    pool = ParserPool(ParserLimits(processes=1))
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        print(json.dumps(pool.run(connect_to, port, signal=Signal.after(60), what="x")))
    pool.close()
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the test's own filter is x86_64's")
def test_a_kernel_without_namespaces_or_landlock_is_logged_and_the_rest_still_holds(tmp_path):
    script = tmp_path / "weaker_kernel.py"
    script.write_text(WEAKER_KERNEL)
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stdout.splitlines() if line.startswith("WARNING")]
    assert any("parser sandbox: no network namespace" in w for w in warnings), done.stdout
    assert any("parser sandbox: no landlock" in w for w in warnings), done.stdout
    assert any("could not become nobody" in w for w in warnings), done.stdout
    assert done.stdout.splitlines()[-1].startswith('"refused')  # seccomp still refuses sockets

"""The parser sandbox: what a parser process gives up before it reads a byte from the web.

A memory-safety bug in libxml2 or a PDF library lets a hostile file run code in the process
that parses it. ``enter`` makes that process worth nothing to such code, in this order:

1. its environment (keys, ``SECRET_KEY``, ``DATABASE_URL``) is wiped from memory and replaced by
   the few variables parsing needs, and every inherited file descriptor but its pipe is closed;
2. it gets a network namespace of its own, with no interface up (``unshare(CLONE_NEWNET)``; in a
   new user namespace when the worker is not root);
3. a worker running as root drops the child to ``nobody`` (``setgroups([])``, ``setgid``,
   ``setuid``), which also makes ``RLIMIT_NPROC`` of 0 hold: no new processes. When Python
   lives in a directory only root may enter (``/root/.pyenv``), the child first gets a mount
   namespace where that directory is an empty tmpfs holding only the paths Python needs;
4. ``PR_SET_NO_NEW_PRIVS``, then landlock: writes only inside the child's private directory;
5. a seccomp filter refuses ``socket``, ``connect``, ``fork``, ``execve``, ``ptrace``, other
   processes' memory, namespaces, mounts, io_uring and ``bpf``; ``clone`` only makes threads.

What the kernel refuses is returned as sentences (the parent logs each as a warning): a kernel
without user namespaces, landlock or seccomp still runs parsers, never silently unconfined.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import resource
import struct
import sys
import tempfile
from collections.abc import Iterable

from tools.seccomp import make_filter

_libc = ctypes.CDLL(None, use_errno=True)

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_MOVE, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 8192, 16384, 1 << 18
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_UNPRIVILEGED_USER = "nobody"
# What parsing needs from an environment; nothing of the worker's is kept.
_ENVIRONMENT = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}


def enter(keep_fds: Iterable[int], workdir: str) -> list[str]:
    """Confine this process (see the module docstring); return what the kernel did not allow.

    ``keep_fds`` stay open (the pipe to the parent); ``workdir`` is the one writable directory.
    """
    _wipe_environment(workdir)
    _close_fds(set(keep_fds))
    missing = []
    for step in (_leave_network, lambda: _drop_user(workdir), _no_new_processes):
        problem = step()
        if problem:
            missing.append(problem)
    _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    for step in (lambda: _allow_writes_only_in(workdir), _filter_syscalls):
        problem = step()
        if problem:
            missing.append(problem)
    return missing


def _wipe_environment(workdir: str) -> None:
    # Clearing os.environ would leave the values in memory: in the bytes objects Python read
    # them into and in the block the process started with (/proc/self/environ). Both are
    # overwritten with zeros first, so that code run by a parser bug finds no secret anywhere.
    for value in list(os.environb.values()):
        if len(value) > 1:  # one-byte and empty bytes objects are shared singletons
            ctypes.memset(id(value) + sys.getsizeof(b"") - 1, 0, len(value))
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])
        ctypes.memset(start, 0, end - start)
    except (OSError, IndexError, ValueError):
        pass
    os.environ.clear()
    os.environ.update(_ENVIRONMENT, HOME=workdir, TMPDIR=workdir)
    tempfile.tempdir = workdir


def _close_fds(keep: set[int]) -> None:
    # Standard input and output become /dev/null; standard error stays, for a crash's last words.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the descriptor of the listing itself, already closed


def _leave_network() -> str | None:
    flags = _CLONE_NEWNET if os.geteuid() == 0 else _CLONE_NEWUSER | _CLONE_NEWNET
    if _libc.unshare(flags) == 0:
        return None
    error = os.strerror(ctypes.get_errno())
    return f"no network namespace ({error}): the seccomp filter alone keeps the network out"


def _drop_user(workdir: str) -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        user = pwd.getpwnam(_UNPRIVILEGED_USER)
        _let_python_be_read(workdir)
        os.chown(workdir, user.pw_uid, user.pw_gid)
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    except (KeyError, OSError) as exc:
        return f"the parser runs as root: it could not become {_UNPRIVILEGED_USER} ({exc})"
    return None


def _let_python_be_read(workdir: str) -> None:
    """Make the directories Python imports from reachable by an unprivileged user, in this
    process's own mount namespace: each directory others may not enter on the way is covered by
    an empty tmpfs into which only the needed entries are bound (the rest stays hidden)."""
    blocked: dict[str, set[str]] = {}
    for path in {os.path.realpath(p) for p in (*sys.path, sys.prefix, sys.base_prefix) if p}:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            ancestor = "/".join(parts[:depth]) or "/"
            if not os.stat(ancestor).st_mode & 0o001:  # others may not enter it
                blocked.setdefault(ancestor, set()).add(parts[depth])
                break
    if not blocked:
        return
    _mount_call(_libc.unshare(_CLONE_NEWNS), "a mount namespace")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    for ancestor, names in blocked.items():
        staged = []
        for index, name in enumerate(sorted(names)):
            stage = os.path.join(workdir, f".python-{index}")
            os.mkdir(stage)
            _mount(os.path.join(ancestor, name), stage, None, _MS_BIND | _MS_REC)
            staged.append((name, stage))
        _mount("tmpfs", ancestor, "tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755,size=64k")
        for name, stage in staged:
            os.mkdir(os.path.join(ancestor, name))
            _mount(stage, os.path.join(ancestor, name), None, _MS_MOVE)
            os.rmdir(stage)


def _mount(
    source: str | None, target: str, kind: str | None, flags: int, data: bytes = b""
) -> None:
    def encode(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    result = _libc.mount(encode(source), encode(target), encode(kind), flags, data or None)
    _mount_call(result, f"mount {target}")


def _mount_call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _no_new_processes() -> str | None:
    if os.geteuid() == 0:
        return "RLIMIT_NPROC does not bind root: only the seccomp filter refuses fork"
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    return None


_LANDLOCK_CREATE_RULESET, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
# WRITE_FILE, REMOVE_DIR, REMOVE_FILE, MAKE_CHAR … MAKE_SYM (ABI 1), REFER (2), TRUNCATE (3).
_LANDLOCK_WRITES = {1: 0b1_1111_1111_0010, 2: 0b11_1111_1111_0010, 3: 0b111_1111_1111_0010}


def _allow_writes_only_in(workdir: str) -> str | None:
    abi = _libc.syscall(_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_VERSION)
    if abi < 1:
        error = os.strerror(ctypes.get_errno())
        return f"no landlock ({error}): the parser can write wherever its user may"
    writes = _LANDLOCK_WRITES[min(abi, 3)]
    attr = struct.pack("=Q", writes)
    ruleset = _libc.syscall(_LANDLOCK_CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        return f"landlock refused a ruleset ({os.strerror(ctypes.get_errno())})"
    try:
        directory = os.open(workdir, os.O_PATH | os.O_DIRECTORY)
        try:
            rule = struct.pack("=Qi", writes, directory)
            if _libc.syscall(_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, rule, 0):
                return f"landlock refused a rule ({os.strerror(ctypes.get_errno())})"
        finally:
            os.close(directory)
        if _libc.syscall(_LANDLOCK_RESTRICT_SELF, ruleset, 0):
            return f"landlock refused to restrict ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return None


def _filter_syscalls() -> str | None:
    program = make_filter(os.uname().machine)
    if program is None:
        return f"no seccomp filter for {os.uname().machine}: fork and sockets are not refused"
    buffer = ctypes.create_string_buffer(program)
    fprog = struct.pack("HxxxxxxP", len(program) // 8, ctypes.addressof(buffer))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog, 0, 0):
        error = os.strerror(ctypes.get_errno())
        return f"no seccomp filter ({error}): fork and sockets are not refused"
    return None

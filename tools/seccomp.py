"""The parser sandbox's seccomp filter: a classic BPF program built by hand, no library needed.

The filter refuses (``EPERM``) the system calls a parser never needs and an attacker would:
sockets, new processes and programs, other processes' memory, namespaces, mounts, io_uring
(whose requests open sockets without a system call) and ``bpf``. ``clone`` may make threads
only; ``clone3``, whose flags a filter cannot read, answers ``ENOSYS`` so the C library falls
back to ``clone``. A call made under another architecture's numbers ends the process.
"""

from __future__ import annotations

import errno
import struct

_LOAD, _JEQ, _JGE, _JSET, _RETURN = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_KILL = 0x80000000
_ERRNO = 0x00050000
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000

# machine: (audit architecture, clone, clone3, refused system calls)
_REFUSED = ("socket", "connect", "fork", "vfork", "execve", "execveat", "ptrace")
_REFUSED += ("process_vm_readv", "process_vm_writev", "unshare", "setns", "mount", "bpf")
_REFUSED += ("io_uring_setup", "io_uring_enter", "io_uring_register")
_NUMBERS = {
    "x86_64": {
        "socket": 41,
        "connect": 42,
        "fork": 57,
        "vfork": 58,
        "execve": 59,
        "execveat": 322,
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "unshare": 272,
        "setns": 308,
        "mount": 165,
        "bpf": 321,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "clone": 56,
        "clone3": 435,
    },  # fmt: skip
    "aarch64": {
        "socket": 198,
        "connect": 203,
        "execve": 221,
        "execveat": 281,
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "unshare": 97,
        "setns": 268,
        "mount": 40,
        "bpf": 280,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "clone": 220,
        "clone3": 435,
    },  # fmt: skip
}
_ARCHITECTURES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def make_filter(machine: str) -> bytes | None:
    """Return the filter's program (``struct sock_filter`` array) for ``machine``, or None."""
    numbers = _NUMBERS.get(machine)
    if numbers is None:
        return None
    refused = [numbers[name] for name in _REFUSED if name in numbers]
    # (code, target when true, target when false, k); a target is a label or 0 (the next one)
    program: list[tuple[int, str | int, str | int, int]] = [
        (_LOAD, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 0, "kill", _ARCHITECTURES[machine]),
        (_LOAD, 0, 0, 0),  # seccomp_data.nr
    ]
    if machine == "x86_64":
        program.append((_JGE, "refuse", 0, _X32_BIT))
    program += [(_JEQ, "refuse", 0, number) for number in refused]
    program += [
        (_JEQ, "enosys", 0, numbers["clone3"]),
        (_JEQ, 0, "allow", numbers["clone"]),
        (_LOAD, 0, 0, 16),  # the low half of seccomp_data.args[0]: clone's flags
        (_JSET, "allow", "refuse", _CLONE_THREAD),
    ]
    labels = {"allow": _ALLOW, "refuse": _ERRNO | errno.EPERM, "enosys": _ERRNO | errno.ENOSYS}
    labels["kill"] = _KILL
    at = {name: len(program) + i for i, name in enumerate(labels)}
    program += [(_RETURN, 0, 0, value) for value in labels.values()]
    code = b""
    for index, (op, when_true, when_false, k) in enumerate(program):
        jt = at[when_true] - index - 1 if isinstance(when_true, str) else when_true
        jf = at[when_false] - index - 1 if isinstance(when_false, str) else when_false
        code += struct.pack("=HBBI", op, jt, jf, k)
    return code

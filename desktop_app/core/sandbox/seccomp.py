"""A seccomp filter for the code sandbox, assembled by hand (classic BPF, a few rules).

bubblewrap installs it (``--seccomp FD``) just before it starts the code. It refuses, with
EPERM:

* ``ptrace`` and ``process_vm_readv/writev``: sandboxed code attached to the sandbox's
  own pid 1 (bwrap) and could read or steer it;
* ``socket(AF_UNIX, …)``: a Unix socket file placed in the workspace is a door to a host
  process (the network namespace does not cover sockets reached through the file
  system). ``socketpair`` (asyncio and multiprocessing use it) stays allowed: it connects
  to nothing outside;
* any x32-ABI system call on x86-64, and every call made through another ABI of the
  machine (i386's ``int 0x80`` on x86-64: an attacker used it to reach a host socket and
  ptrace pid 1 past the rules above);
* ``fallocate`` is answered "not supported" (glibc then writes instead, which the disk
  budget counts: 3 GB were reserved in 3 ms).

Everything else is allowed: the namespaces, the read-only system and the limits do the
rest. Only x86-64 and AArch64 are known; on another architecture ``filter_program``
returns None and the sandbox runs without this filter.
"""

from __future__ import annotations

import platform
import struct

_LD_ABS_W = 0x20
_JEQ = 0x15
_JGE = 0x35
_RET = 0x06
_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
_NOT_SUPPORTED = 0x00050000 | 95  # SECCOMP_RET_ERRNO | EOPNOTSUPP
_AF_UNIX = 1
_X32_BIT = 0x40000000

#: arch id (AUDIT_ARCH_*), the numbers of ptrace, process_vm_readv/writev, socket, and
#: fallocate.
_ARCHES = {
    "x86_64": (0xC000003E, (101, 310, 311), 41, 285),
    "aarch64": (0xC00000B7, (117, 270, 271), 198, 47),
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter as the bytes of a ``struct sock_filter`` array, for this machine."""
    known = _ARCHES.get((machine or platform.machine()).lower())
    if known is None:
        return None
    arch, denied, socket_nr, fallocate_nr = known
    # Layout: checks, then the three returns at fixed places at the end.
    checks = 4 + len(denied) + 1 + 3
    allow, deny, unsupported = checks, checks + 1, checks + 2

    def to(target: int, at: int) -> int:  # a jump is relative to the next instruction
        return target - at - 1

    ops = [_op(_LD_ABS_W, 4),  # seccomp_data.arch
           # Another ABI of this machine (i386 on x86-64: ``int 0x80``) is refused whole:
           # its calls have other numbers, which the rules below would not see.
           _op(_JEQ, arch, 0, to(deny, 1)),
           _op(_LD_ABS_W, 0),  # seccomp_data.nr
           _op(_JGE, _X32_BIT, to(deny, 3), 0)]
    ops += [_op(_JEQ, nr, to(deny, 4 + n), 0) for n, nr in enumerate(denied)]
    at = len(ops)
    # fallocate reserves gigabytes in a millisecond, faster than any watcher: refused as
    # unsupported, so glibc's posix_fallocate falls back to writing (and is counted).
    ops.append(_op(_JEQ, fallocate_nr, to(unsupported, at), 0))
    at = len(ops)
    ops += [_op(_JEQ, socket_nr, 0, to(allow, at)),
            _op(_LD_ABS_W, 16),  # seccomp_data.args[0], low half: the address family
            _op(_JEQ, _AF_UNIX, to(deny, at + 2), to(allow, at + 2)),
            _op(_RET, _ALLOW),
            _op(_RET, _DENY),
            _op(_RET, _NOT_SUPPORTED)]
    assert len(ops) == unsupported + 1 and ops[allow] == _op(_RET, _ALLOW)
    return b"".join(ops)

"""A seccomp filter for the code sandbox, assembled by hand (classic BPF, a few rules).

bubblewrap installs it (``--seccomp FD``) just before it starts the code. It refuses, with
EPERM:

* ``ptrace`` and ``process_vm_readv/writev``: sandboxed code attached to the sandbox's
  own pid 1 (bwrap) and could read or steer it;
* ``socket(AF_UNIX, …)``: a Unix socket file placed in the workspace is a door to a host
  process (the network namespace does not cover sockets reached through the file
  system). ``socketpair`` (asyncio and multiprocessing use it) stays allowed: it connects
  to nothing outside;
* any x32-ABI system call on x86-64 (a classic way around filters written for x86-64).

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
_AF_UNIX = 1
_X32_BIT = 0x40000000

#: arch id (AUDIT_ARCH_*), and the numbers of ptrace, process_vm_readv/writev, socket.
_ARCHES = {
    "x86_64": (0xC000003E, (101, 310, 311), 41),
    "aarch64": (0xC00000B7, (117, 270, 271), 198),
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter as the bytes of a ``struct sock_filter`` array, for this machine."""
    known = _ARCHES.get((machine or platform.machine()).lower())
    if known is None:
        return None
    arch, denied, socket_nr = known
    check_socket = 4 + len(denied)
    allow, deny = check_socket + 3, check_socket + 4

    def to(target: int, at: int) -> int:  # a jump is relative to the next instruction
        return target - at - 1

    ops = [_op(_LD_ABS_W, 4),  # seccomp_data.arch
           _op(_JEQ, arch, 0, to(allow, 1)),
           _op(_LD_ABS_W, 0),  # seccomp_data.nr
           _op(_JGE, _X32_BIT, to(deny, 3), 0)]
    ops += [_op(_JEQ, nr, to(deny, 4 + n), 0) for n, nr in enumerate(denied)]
    ops += [_op(_JEQ, socket_nr, 0, to(allow, check_socket)),
            _op(_LD_ABS_W, 16),  # seccomp_data.args[0], low half: the address family
            _op(_JEQ, _AF_UNIX, to(deny, check_socket + 2), to(allow, check_socket + 2)),
            _op(_RET, _ALLOW),
            _op(_RET, _DENY)]
    assert len(ops) == deny + 1
    return b"".join(ops)

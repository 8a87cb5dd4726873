"""The hand-assembled seccomp filter: every jump lands inside the program, on the allow or
the deny return; unknown architectures get no filter rather than a wrong one."""

from __future__ import annotations

import struct

import pytest

from desktop_app.core.sandbox.seccomp import filter_program

RET, ALLOW, DENY, NOT_SUPPORTED = 0x06, 0x7FFF0000, 0x00050001, 0x00050000 | 95


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_jumps_land_on_the_returns(machine: str) -> None:
    program = filter_program(machine)
    assert program is not None and len(program) % 8 == 0
    ops = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    assert ops[-3:] == [(RET, 0, 0, ALLOW), (RET, 0, 0, DENY), (RET, 0, 0, NOT_SUPPORTED)]
    for at, (code, jt, jf, _k) in enumerate(ops):
        if code & 0x07 == 0x05:  # a jump: both targets inside the program
            assert at + 1 + jt < len(ops) and at + 1 + jf < len(ops)


def test_an_unknown_architecture_gets_no_filter() -> None:
    assert filter_program("riscv64") is None


def _run(program: bytes, arch: int, nr: int, arg0: int = 0) -> int:
    """A classic-BPF interpreter for the three instructions the filter uses."""
    ops = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    data = struct.pack("<iI", nr, arch) + b"\0" * 8 + struct.pack("<Q", arg0)
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35):
            hit = acc == k if code == 0x15 else acc >= k
            pc += 1 + (jt if hit else jf)
        else:
            return k


X86_64, I386 = 0xC000003E, 0x40000003


@pytest.mark.parametrize(("arch", "nr", "arg0", "expected"), [
    (X86_64, 0, 0, ALLOW),              # read
    (X86_64, 41, 2, ALLOW),             # socket(AF_INET): the network namespace has none
    (X86_64, 41, 1, DENY),              # socket(AF_UNIX)
    (X86_64, 101, 0, DENY),             # ptrace
    (X86_64, 285, 0, NOT_SUPPORTED),    # fallocate
    (X86_64, 0x40000000 | 41, 1, DENY),  # x32 ABI
    (I386, 359, 1, DENY),               # i386 socket(AF_UNIX) through int 0x80
    (I386, 26, 16, DENY),               # i386 ptrace
    (I386, 3, 0, DENY),                 # any i386 call
])
def test_the_filter_decides_as_documented(arch: int, nr: int, arg0: int, expected: int) -> None:
    program = filter_program("x86_64")
    assert program is not None
    assert _run(program, arch, nr, arg0) == expected

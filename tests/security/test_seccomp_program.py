"""The hand-assembled seccomp filter: every jump lands inside the program, on the allow or
the deny return; unknown architectures get no filter rather than a wrong one."""

from __future__ import annotations

import struct

import pytest

from desktop_app.core.sandbox.seccomp import filter_program

RET, ALLOW, DENY = 0x06, 0x7FFF0000, 0x00050001


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_jumps_land_on_the_returns(machine: str) -> None:
    program = filter_program(machine)
    assert program is not None and len(program) % 8 == 0
    ops = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    assert ops[-2] == (RET, 0, 0, ALLOW) and ops[-1] == (RET, 0, 0, DENY)
    for at, (code, jt, jf, _k) in enumerate(ops):
        if code & 0x07 == 0x05:  # a jump: both targets inside the program
            assert at + 1 + jt < len(ops) and at + 1 + jf < len(ops)


def test_an_unknown_architecture_gets_no_filter() -> None:
    assert filter_program("riscv64") is None

"""A GGUF's chat template is rendered once under limits before the model is used.

llama-cpp-python renders the template in this process with Jinja's sandbox, which stops
code execution but not work: a template with a loop of 10^9 steps made ``chat`` run for
ever (Ctrl-C did not stop it), one that built a 1.5 GB string took the process to 5.7 GB.
So a model from outside (not the bundled one, whose file is checked by SHA-256) has its
template rendered first in a forked child with a CPU-time and memory limit, on a sample
conversation with a system turn, a question, a tool call and its result. A template that
is killed there is refused with a message; one that only fails to render is left to the
normal path, which reports its errors.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
from pathlib import Path

from desktop_app.core.errors import ModelFileError

#: Limits of the trial render: far above what a real template needs (milliseconds, a few
#: MB for the longest real ones), far below what hangs or exhausts the machine.
CPU_SECONDS = 5
MEMORY_BYTES = 1 << 30
WALL_SECONDS = 15.0

_SAMPLE = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is 2 + 2? " * 20},
    {"role": "assistant", "content": "", "tool_calls": [{
        "id": "call_0", "type": "function",
        "function": {"name": "calculator", "arguments": '{"expression": "2 + 2"}'}}]},
    {"role": "tool", "content": "2 + 2 = 4", "tool_call_id": "call_0", "name": "calculator"},
    {"role": "assistant", "content": "It is 4."},
    {"role": "user", "content": "Thanks!"},
]
_TOOLS = [{"type": "function", "function": {
    "name": "calculator", "description": "Exact arithmetic",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}}]

_checked: set[tuple[str, int, int]] = set()


def _address_space() -> int:
    """Bytes of address space this process uses now (a forked child inherits the
    parent's: an app with a model loaded already maps gigabytes)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _render(template: str) -> None:
    """In the child: limits first (memory: what the render may add to what the process
    already maps), then one render like llama-cpp-python's."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment  # imported by the parent

    memory = _address_space() + MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)

        def raise_exception(message: str) -> None:
            raise ValueError(message)

        env.from_string(template).render(
            messages=_SAMPLE, tools=_TOOLS, add_generation_prompt=True, bos_token="<s>",
            eos_token="</s>", raise_exception=raise_exception,
            strftime_now=lambda fmt: "06 Dec 2026")
    except MemoryError:
        os._exit(3)
    except Exception:  # noqa: BLE001 - a template that fails is the normal path's to report
        os._exit(0)
    os._exit(0)


def check_template(template: str | None, path: Path) -> None:
    """Raise ``ModelFileError`` when ``template`` takes more time or memory to render than
    any real one; checked once per file (path, size, modification time) per process."""
    if not template:
        return
    try:
        info = path.stat()
        key = (str(path), info.st_size, info.st_mtime_ns)
    except OSError:
        key = (str(path), 0, 0)
    if key in _checked:
        return
    # fork: the frozen app has no interpreter to start, and the child needs nothing but
    # jinja2 (imported here, before the child's limits); it leaves with os._exit, so
    # nothing of the parent's state is run twice.
    import jinja2.sandbox  # noqa: F401

    child = multiprocessing.get_context("fork").Process(target=_render, args=(template,),
                                                        daemon=True)
    child.start()
    child.join(WALL_SECONDS)
    if child.is_alive():
        child.kill()
        child.join()
        code: int | None = -9
    else:
        code = child.exitcode
    if code not in (0, None):
        reason = ("more memory than" if code == 3 else "more time than")
        raise ModelFileError(
            f"The chat template inside {path.name} takes {reason} any real template to "
            "render, so the model is not used (a damaged or hostile file).",
            hint="Use another download of this model, or set a chat format for it in "
                 "Settings → Models (its template is then not used).")
    _checked.add(key)

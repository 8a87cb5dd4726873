"""Where the Python interpreter and its packages appear inside the sandbox.

Bound at their own host paths they would name the user (``/home/alice/.venv``) to the code
inside, so the interpreter's installation is bound at ``/opt/python`` and each of a
virtual environment's package folders at ``/opt/python-packages/N``; the runner adds those
with ``site.addsitedir`` (which also reads their ``.pth`` files). An interpreter under
``/usr`` is already inside (the read-only system), and a frozen app, whose interpreter
cannot move, keeps its own paths.
"""

from __future__ import annotations

import site
import sys
from dataclasses import dataclass
from pathlib import Path

PYTHON_INSIDE = "/opt/python"
PACKAGES_INSIDE = "/opt/python-packages"


@dataclass(frozen=True)
class PythonInside:
    """Read-only binds (host → inside), the interpreter's path inside, the package folders
    to add inside."""

    binds: tuple[tuple[str, str], ...]
    executable: str
    site_dirs: tuple[str, ...] = ()

    def runner_prelude(self) -> str:
        """Python source that makes the package folders importable, for the runner."""
        if not self.site_dirs:
            return ""
        return f"import site\nfor _d in {list(self.site_dirs)!r}:\n    site.addsitedir(_d)\n"


def python_at_own_paths() -> PythonInside:
    roots = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}
    kept = sorted(r for r in roots if r and r != "/" and not r.startswith("/usr"))
    return PythonInside(tuple((r, r) for r in kept), sys.executable)


def python_inside() -> PythonInside:
    """This interpreter's layout inside a bubblewrap sandbox."""
    base_exe = Path(getattr(sys, "_base_executable", sys.executable))
    base = Path(sys.base_prefix)
    if getattr(sys, "frozen", False) or not base_exe.is_absolute():
        return python_at_own_paths()
    binds: list[tuple[str, str]] = []
    executable = str(base_exe)
    if base != Path("/usr") and Path("/usr") not in base.parents:
        try:
            executable = str(Path(PYTHON_INSIDE) / base_exe.relative_to(base))
        except ValueError:  # an interpreter outside its own prefix: nothing to relocate
            return python_at_own_paths()
        binds.append((str(base), PYTHON_INSIDE))
    site_dirs: list[str] = []
    if sys.prefix != sys.base_prefix:  # a virtual environment: its packages
        for index, folder in enumerate(p for p in site.getsitepackages() if Path(p).is_dir()):
            inside = f"{PACKAGES_INSIDE}/{index}"
            binds.append((folder, inside))
            site_dirs.append(inside)
    return PythonInside(tuple(binds), executable, tuple(site_dirs))

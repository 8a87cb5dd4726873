#!/usr/bin/env bash
# One command from a fresh clone to a passing test suite:
#   bash packaging/test.sh [pytest args...]
# Installs system libraries and the dev environment, then runs pytest on a virtual X server
# (Qt tests run offscreen; the window smoke test uses the real X server).
# With DESKTOP_APP_LINT=1 (CI sets it), ruff and mypy --strict run first and fail the script.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

# gnome-keyring + dbus: one test stores a key in a real Secret Service on a private bus.
DESKTOP_APP_EXTRA_PACKAGES="gnome-keyring dbus espeak-ng" bash packaging/system-deps.sh
bash packaging/install.sh --dev

python="${DESKTOP_APP_VENV:-$here/.venv}/bin/python"
if [[ "${DESKTOP_APP_LINT:-0}" == 1 ]]; then
    { "$python" -m ruff check desktop_app tests benchmarks \
        && "$python" -m mypy --strict desktop_app/core; } \
        || { echo "test.sh: ruff or mypy found errors (above)" >&2; exit 1; }
fi
exec xvfb-run -a -s "-screen 0 1280x800x24" "$python" -m pytest "$@"

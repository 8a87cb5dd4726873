#!/usr/bin/env bash
# One command from a fresh clone to a running app on the bundled local model:
#   bash packaging/run.sh
# Installs system libraries (Debian/Ubuntu, when root or sudo is available), builds the
# virtual environment, then opens the window. No account, no key, no network at run time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$here/packaging/system-deps.sh" || echo "[run] could not install system libraries; continuing" >&2
bash "$here/packaging/install.sh"

app=("${DESKTOP_APP_VENV:-$here/.venv}/bin/desktop-app" "$@")
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" && "$(uname)" == "Linux" ]]; then
    echo "[run] no display found: starting the window on a virtual X server (Xvfb)" >&2
    exec xvfb-run -a -s "-screen 0 1280x800x24" "${app[@]}"
fi
exec "${app[@]}"

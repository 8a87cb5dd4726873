#!/usr/bin/env bash
# Freeze desktop-app into a self-contained folder with PyInstaller (dist/desktop-app/).
#   bash packaging/freeze.sh
# The bundled model parts and llama.cpp's shared libraries travel inside the bundle, so the
# frozen app works offline on first launch like the venv install does.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash packaging/install.sh
venv="${DESKTOP_APP_VENV:-$here/.venv}"
"$venv/bin/python" -m pip install -q "pyinstaller>=6.5"
"$venv/bin/python" -m PyInstaller --noconfirm --clean packaging/desktop-app.spec
echo "[freeze] built dist/desktop-app/desktop-app"

#!/usr/bin/env bash
# One command to build the Linux app: a frozen, self-contained folder (PyInstaller) and a
# .deb that installs it to /opt/desktop-app with a menu entry and icons, and the same folder
# as a portable archive for other distributions (unpack anywhere, run desktop-app/desktop-app).
#   bash packaging/build-linux.sh   # -> dist/desktop-app/, dist/desktop-app_<v>_<arch>.deb,
#                                   #    dist/desktop-app-<v>-linux-<arch>.tar.zst
# It builds in its own virtual environment (build/venv), so nothing the developer installed
# beside the app (a PyTorch, say) ends up in the bundle.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
log() { printf '\033[1m[build]\033[0m %s\n' "$*" >&2; }
started=$SECONDS
command -v zstd >/dev/null || { log "zstd is missing: sudo apt-get install zstd"; exit 1; }

export DESKTOP_APP_VENV="$here/build/venv"
bash packaging/install.sh
py="$DESKTOP_APP_VENV/bin/python"
"$py" -m pip install -q --disable-pip-version-check "pyinstaller>=6.5,<7"
version="$("$py" -c 'import desktop_app; print(desktop_app.__version__)')"

log "freezing desktop-app $version"
rm -rf dist/desktop-app build/desktop-app
"$py" -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist \
    --workpath build/pyinstaller packaging/desktop-app.spec

arch="$(dpkg --print-architecture 2>/dev/null || uname -m)"
root="build/deb/desktop-app_${version}_${arch}"
log "packaging $root.deb"
rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root/opt" "$root/usr/bin" "$root/usr/share/applications" \
    "$root/usr/share/icons/hicolor"
cp -a dist/desktop-app "$root/opt/desktop-app"
ln -s /opt/desktop-app/desktop-app "$root/usr/bin/desktop-app"
cp packaging/desktop-app.desktop "$root/usr/share/applications/desktop-app.desktop"
QT_QPA_PLATFORM=offscreen "$py" packaging/render_icons.py "$root/usr/share/icons/hicolor"
mkdir -p "$root/usr/share/icons/hicolor/scalable/apps"
cp resources/icons/app.svg "$root/usr/share/icons/hicolor/scalable/apps/desktop-app.svg"
size_kb="$(du -sk "$root" | cut -f1)"
cat > "$root/DEBIAN/control" <<CONTROL
Package: desktop-app
Version: $version
Architecture: $arch
Maintainer: desktop-app developers <desktop-app@localhost>
Installed-Size: $size_kb
Depends: libc6, libegl1, libgl1, libfontconfig1, libdbus-1-3, libxkbcommon0, libxkbcommon-x11-0, libxcb-cursor0, libxcb-icccm4, libxcb-image0, libxcb-keysyms1, libxcb-randr0, libxcb-render-util0, libxcb-shape0, libxcb-xinerama0, libxcb-xkb1, libnss3, libasound2
Recommends: bubblewrap
Section: utils
Priority: optional
Description: private, local-first desktop chat assistant
 Runs local GGUF models through llama.cpp (a small model is included, so it
 works offline on first launch) or any OpenAI-compatible API. Keys stay in
 the system keyring; nothing leaves the computer unless you choose a hosted
 model.
CONTROL
# zstd: xz took five minutes for the 1.2 GB folder on 2 cores; Debian 12 and Ubuntu 21.10+ read zstd.
dpkg-deb -Zzstd --root-owner-group --build "$root" "dist/desktop-app_${version}_${arch}.deb" >/dev/null
deb="dist/desktop-app_${version}_${arch}.deb"
portable="dist/desktop-app-${version}-linux-$(uname -m).tar.zst"
log "packing $portable"
tar -C dist --owner=0 --group=0 -cf - desktop-app | zstd -q -T0 -3 -f -o "$portable"
log "done in $((SECONDS - started)) s: dist/desktop-app ($(du -sh dist/desktop-app | cut -f1)), $deb ($(du -sh "$deb" | cut -f1)), $portable ($(du -sh "$portable" | cut -f1))"

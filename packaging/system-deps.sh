#!/usr/bin/env bash
# System libraries Qt 6 / QtWebEngine need on Debian and Ubuntu, plus Xvfb for machines with
# no display, a font (without one, web previews render no text) and bubblewrap (the OS
# sandbox the Python code tool runs in). Needs root or sudo.
# Skips quietly when everything is already there.
set -euo pipefail

packages=(
    xvfb xauth fonts-dejavu-core
    libegl1 libgl1 libopengl0 libglib2.0-0 libfontconfig1 libdbus-1-3
    libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0
    libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0
    libxcb-xkb1 libxcomposite1 libxdamage1 libxrandr2 libxtst6 libxkbfile1 libxshmfence1
    libnss3 libasound2 bubblewrap
)
# Extra packages a caller needs (the test script adds a real Secret Service for keyring tests).
read -r -a extra <<<"${DESKTOP_APP_EXTRA_PACKAGES:-}"
packages+=("${extra[@]}")

command -v dpkg-query >/dev/null || { echo "[system-deps] not a Debian-like system; install Qt 6 runtime libraries and Xvfb yourself" >&2; exit 0; }
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=""
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "[system-deps] missing: ${missing[*]} (run as root to install)" >&2; exit 1; }
    sudo="sudo"
fi
echo "[system-deps] installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

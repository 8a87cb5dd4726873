#!/usr/bin/env bash
# The .deb on a clean Debian 12 with no Python, offline: debootstrap a minimal bookworm into
# a folder, install the .deb there (apt resolves its library Depends), then run the smoke
# test inside it with no network (unshare -n). Needs root and Debian's mirror.
#   bash packaging/test-clean-debian.sh [dist/desktop-app_<version>_<arch>.deb]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deb="$(realpath "${1:-$(ls "$here"/dist/desktop-app_*.deb | head -1)}")"
log() { printf '\033[1m[clean-debian]\033[0m %s\n' "$*" >&2; }
[[ $(id -u) -eq 0 ]] || { log "run as root (debootstrap, chroot)"; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
root="$(mktemp -d /tmp/desktop-app-debian12.XXXXXX)"
cleanup() {
    umount -l "$root/proc" 2>/dev/null || true
    # --one-file-system: never follow a mount that failed to go away into the host system.
    if ! grep -q " $root/" /proc/mounts; then
        rm -rf --one-file-system "$root"
    else
        log "left $root in place: something is still mounted inside it"
    fi
}
trap cleanup EXIT
log "debootstrap bookworm (minbase) into $root"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
# debootstrap made the few device nodes a system needs in $root/dev; the host's /dev is
# not bound in (a bind mount left behind would expose it to the cleanup).
mount -t proc proc "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$here/packaging/smoke-linux.sh" "$root/tmp/"
log "installing $(basename "$deb") and the smoke test's X tools (no Python)"
chroot "$root" sh -c "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q /tmp/$(basename "$deb") xvfb xauth xdotool x11-utils >/dev/null"
if chroot "$root" sh -c 'command -v python3 || ls /usr/bin/python* 2>/dev/null'; then
    log "FAILED: Python is installed in the clean system; the test would prove nothing"
    exit 1
fi
log "smoke test inside, without network"
unshare -n chroot "$root" bash -c 'export HOME=/root; bash /tmp/smoke-linux.sh /opt/desktop-app'
log "passed: installed and answered on a clean Debian 12 without Python, offline"

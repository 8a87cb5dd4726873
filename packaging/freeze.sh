#!/usr/bin/env bash
# Kept for old instructions: the Linux build (frozen folder + .deb) is build-linux.sh.
exec bash "$(dirname "${BASH_SOURCE[0]}")/build-linux.sh" "$@"

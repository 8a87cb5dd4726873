"""Offline voice (issue 29), behind one entry: speech to text (``Transcriber``, Whisper
base through faster-whisper) and text to speech (``synthesize``, a Piper voice), with the
models installed from PyPI and checked by SHA-256. Nothing is sent anywhere.
"""

from __future__ import annotations

from desktop_app.core.voice.models import VoiceError
from desktop_app.core.voice.stt import Transcriber, Transcript, normalise, word_error_rate
from desktop_app.core.voice.tts import sentences, speakable, synthesize

__all__ = ["Transcriber", "Transcript", "VoiceError", "normalise", "sentences", "speakable",
           "synthesize", "word_error_rate"]

"""Dictation in the composer (issue 29): speech is transcribed on this computer while the
user speaks (partial text in the message box), the final text when they stop, so they can
edit it before sending — or it is sent at once if they chose that.

Audio comes from an ``AudioInput``: the default microphone through Qt Multimedia, or a
sound file played in real time (a stand-in device: tests, and "dictate from a file").
Whisper runs on a worker thread; the window only collects samples and shows text.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, QTimer, Signal

from desktop_app.core.voice import Transcriber, VoiceError

RATE = 16_000
#: Loudness (0..1, see ``_level``) above which a chunk counts as speech: about -40 dB.
SPEECH_LEVEL = 0.33
#: Silence after speech that ends an utterance (hands-free mode sends it then).
END_OF_SPEECH_MS = 1200
#: How often the partial text is brought up to date while the user speaks.
PARTIAL_EVERY_MS = 1200
_CHUNK_MS = 100


class AudioInput(Protocol):
    def start(self, on_chunk: Callable[[bytes], None]) -> None:
        """Deliver 16 kHz mono 16-bit PCM chunks to ``on_chunk`` until ``stop``."""

    def stop(self) -> None: ...


class Microphone:
    """The default audio input device."""

    def __init__(self) -> None:
        self._source: Any = None
        self._device_io: Any = None

    def start(self, on_chunk: Callable[[bytes], None]) -> None:
        from PySide6.QtMultimedia import QAudioFormat, QAudioSource, QMediaDevices

        device = QMediaDevices.defaultAudioInput()
        if device.isNull():
            raise VoiceError("No microphone was found.",
                             hint="Connect a microphone (or allow this app to use it in your "
                                  "system's privacy settings) and try again.")
        audio_format = QAudioFormat()
        audio_format.setSampleRate(RATE)
        audio_format.setChannelCount(1)
        audio_format.setSampleFormat(QAudioFormat.SampleFormat.Int16)
        if not device.isFormatSupported(audio_format):
            raise VoiceError(f"The microphone '{device.description()}' cannot record 16 kHz "
                             "mono sound.", hint="Choose another input in your sound settings.")
        self._source = QAudioSource(device, audio_format)
        self._device_io = self._source.start()
        if self._device_io is None:
            raise VoiceError("The microphone is busy or access was denied.",
                             hint="Close other programs using it, or allow access in your "
                                  "system's privacy settings.")
        self._device_io.readyRead.connect(lambda: on_chunk(bytes(self._device_io.readAll())))

    def stop(self) -> None:
        if self._source is not None:
            self._source.stop()
            self._source = None


class SoundFileInput:
    """A sound file played as if it were a microphone, in real time (``speed`` times)."""

    def __init__(self, path: Path, *, speed: float = 1.0) -> None:
        from desktop_app.core.voice.stt import pcm16_to_float, read_wav

        frames, rate, channels = read_wav(path)
        samples = pcm16_to_float(frames, rate, channels)
        import numpy as np

        self._pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
        self._timer = QTimer()
        self._timer.setInterval(max(1, int(_CHUNK_MS / speed)))
        self._offset = 0

    def start(self, on_chunk: Callable[[bytes], None]) -> None:
        step = RATE * 2 * _CHUNK_MS // 1000

        def tick() -> None:
            if self._offset >= len(self._pcm):
                on_chunk(b"\0\0" * (step // 2))  # silence after the end, as a room would
                return
            on_chunk(self._pcm[self._offset:self._offset + step])
            self._offset += step

        self._timer.timeout.connect(tick)
        self._timer.start()

    @property
    def finished(self) -> bool:
        return self._offset >= len(self._pcm)

    def stop(self) -> None:
        self._timer.stop()


def _level(chunk: bytes) -> float:
    """0..1 loudness of a chunk (for the level meter)."""
    import numpy as np

    samples = np.frombuffer(chunk[: len(chunk) // 2 * 2], dtype="<i2").astype(np.float32)
    if not len(samples):
        return 0.0
    rms = float(np.sqrt(np.mean(samples ** 2))) / 32768
    return min(1.0, max(0.0, 1 + math.log10(rms + 1e-6) / 3))  # -60 dB..0 dB


class Dictation(QObject):
    """One dictation: collects audio, keeps a partial transcript, gives the final one."""

    partial = Signal(str)
    final = Signal(str)
    level = Signal(float)
    failed = Signal(str)
    #: The user started speaking (barge-in: reading aloud stops), and stopped for a while.
    speech_started = Signal()
    speech_ended = Signal()

    def __init__(self, transcriber: Transcriber, spawn: Callable[[Any], Any],
                 language: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._transcriber = transcriber
        self._spawn = spawn
        self.language = language
        self._audio = bytearray()
        self._input: AudioInput | None = None
        self._busy = False
        self._heard = 0
        self._speaking = False
        self._silent_ms = 0
        self._timer = QTimer(self)
        self._timer.setInterval(PARTIAL_EVERY_MS)
        self._timer.timeout.connect(self._update_partial)
        self.active = False

    def start(self, source: AudioInput) -> None:
        self._audio.clear()
        self._speaking = False
        self._silent_ms = 0
        self._input = source
        source.start(self._take)  # raises VoiceError: no microphone, busy, denied
        self.active = True
        self._timer.start()

    def _take(self, chunk: bytes) -> None:
        if not self.active:
            return
        self._audio.extend(chunk)
        loudness = _level(chunk)
        self.level.emit(loudness)
        if loudness >= SPEECH_LEVEL:
            if not self._speaking:
                self._speaking = True
                self.speech_started.emit()
            self._silent_ms = 0
        elif self._speaking:
            self._silent_ms += len(chunk) * 1000 // (RATE * 2)
            if self._silent_ms >= END_OF_SPEECH_MS:
                self._speaking = False
                self.speech_ended.emit()

    def _samples(self) -> Any:
        from desktop_app.core.voice.stt import pcm16_to_float

        return pcm16_to_float(bytes(self._audio), RATE, 1)

    def _update_partial(self) -> None:
        if self._busy or len(self._audio) == self._heard:
            return
        self._busy = True
        self._heard = len(self._audio)
        samples = self._samples()

        async def run() -> None:
            try:
                text = (await asyncio.to_thread(self._transcriber.transcribe, samples,
                                                language=self.language)).text
                if self.active:
                    self.partial.emit(text)
            finally:
                self._busy = False

        self._spawn(run())

    def stop(self) -> asyncio.Future[Any]:
        """Stop listening; the final text arrives through ``final``."""
        self._end()
        samples = self._samples()

        async def run() -> None:
            try:
                result = await asyncio.to_thread(self._transcriber.transcribe, samples,
                                                 language=self.language)
            except VoiceError as exc:
                self.failed.emit(str(exc))
                return
            self.final.emit(result.text)

        return self._spawn(run())

    def cancel(self) -> None:
        self._end()
        self._audio.clear()

    def _end(self) -> None:
        self.active = False
        self._timer.stop()
        if self._input is not None:
            self._input.stop()
            self._input = None

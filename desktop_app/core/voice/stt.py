"""Speech to text with faster-whisper (CTranslate2, int8 on the CPU), offline."""

from __future__ import annotations

import threading
import wave
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.voice.models import VoiceError, whisper_dir

SAMPLE_RATE = 16_000


@dataclass
class Segment:
    start: float
    end: float
    text: str


@dataclass
class Transcript:
    text: str
    language: str
    duration: float
    segments: list[Segment] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "language": self.language, "duration": self.duration,
                "segments": [vars(s) for s in self.segments]}


class Transcriber:
    """One loaded Whisper model (loaded on first use; about 1 s); thread-safe."""

    def __init__(self, threads: int = 0) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        if self._model is None:
            try:
                from faster_whisper import WhisperModel
            except ImportError as exc:
                raise VoiceError("Speech recognition (faster-whisper) is not installed.",
                                 hint="Reinstall the app: bash packaging/install.sh") from exc
            self._model = WhisperModel(str(whisper_dir()), device="cpu", compute_type="int8",
                                       cpu_threads=self._threads)
        return self._model

    def transcribe(self, audio: str | Path | Any, *, language: str | None = None) -> Transcript:
        """``audio``: a sound file (WAV, or anything ffmpeg reads) or float32 samples at
        16 kHz, mono. ``language``: a code such as "en", or None to detect it."""
        if isinstance(audio, str | Path):
            path = Path(audio)
            if not path.is_file():
                raise VoiceError(f"There is no sound file {path}.")
            audio = str(path)
        with self._lock:
            model = self._loaded()
            try:
                segments, info = model.transcribe(audio, language=language, beam_size=1,
                                                  vad_filter=False,
                                                  condition_on_previous_text=False)
                parts = [Segment(round(s.start, 2), round(s.end, 2), s.text.strip())
                         for s in segments]
            except (ValueError, RuntimeError, OSError) as exc:
                raise VoiceError(f"The sound could not be read: {exc}",
                                 hint="Use a WAV, MP3, OGG or FLAC file.") from None
        return Transcript(text=" ".join(p.text for p in parts if p.text).strip(),
                          language=str(info.language), duration=round(info.duration, 2),
                          segments=parts)


def read_wav(path: Path) -> tuple[bytes, int, int]:
    """(16-bit PCM frames, sample rate, channels) of a WAV file."""
    with wave.open(str(path), "rb") as source:
        return source.readframes(source.getnframes()), source.getframerate(), \
            source.getnchannels()


def pcm16_to_float(frames: bytes, rate: int, channels: int) -> Any:
    """Float32 mono samples at 16 kHz from 16-bit PCM (what Whisper takes)."""
    import numpy as np

    samples = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    if rate != SAMPLE_RATE and len(samples):
        positions = np.linspace(0, len(samples) - 1, int(len(samples) * SAMPLE_RATE / rate))
        samples = np.interp(positions, np.arange(len(samples)), samples).astype(np.float32)
    return samples


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level edit distance over the reference's length, after ``normalise``."""
    ref, hyp = normalise(reference).split(), normalise(hypothesis).split()
    previous = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        current = [i] + [0] * len(hyp)
        for j, other in enumerate(hyp, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1,
                             previous[j - 1] + (word != other))
        previous = current
    return previous[-1] / max(len(ref), 1)


_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}


def normalise(text: str) -> str:
    """Lower case, no punctuation, numbers as digits, '3pm' as '3 pm' (Whisper writes
    numbers either way)."""
    import re

    text = text.lower().replace("%", " percent ").replace("&", " and ")
    text = re.sub(r"(\d),(\d)", r"\1\2", text)
    text = re.sub(r"(\d)([a-z])", r"\1 \2", text)
    text = re.sub(r"[^\w\s']", " ", text).replace("'", "")
    return " ".join(_NUMBER_WORDS.get(word, word) for word in text.split())

"""Reading answers aloud (issue 29): sentence by sentence, the next one synthesized while
the current one plays, so speech starts before a long answer is done — also while it is
still streaming (``feed`` / ``finish``). Stop, pause and speed.

Synthesis (Piper, a child process) runs off the Qt thread; playback goes through a
``Playback`` (the speakers through Qt Multimedia, or a recorder in tests).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from desktop_app.core.voice import VoiceError, sentences, speakable, synthesize


class Playback(Protocol):
    async def play(self, wav: Path) -> None:
        """Play ``wav``; return when it ended or was stopped."""

    def stop(self) -> None: ...

    def pause(self, paused: bool) -> None: ...


class Speakers:
    """The default audio output through Qt Multimedia."""

    def __init__(self) -> None:
        from PySide6.QtMultimedia import QAudioOutput, QMediaDevices, QMediaPlayer

        if QMediaDevices.defaultAudioOutput().isNull():
            raise VoiceError("No speakers or headphones were found.",
                             hint="Connect an audio output and try again.")
        self._player = QMediaPlayer()
        self._output = QAudioOutput()
        self._player.setAudioOutput(self._output)
        self._done: asyncio.Future[None] | None = None
        self._player.mediaStatusChanged.connect(self._status)
        self._player.errorOccurred.connect(lambda *_args: self._finish())

    def _status(self, status: Any) -> None:
        from PySide6.QtMultimedia import QMediaPlayer

        if status in (QMediaPlayer.MediaStatus.EndOfMedia, QMediaPlayer.MediaStatus.InvalidMedia):
            self._finish()

    def _finish(self) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    async def play(self, wav: Path) -> None:
        from PySide6.QtCore import QUrl

        self._done = asyncio.get_running_loop().create_future()
        self._player.setSource(QUrl.fromLocalFile(str(wav)))
        self._player.play()
        await self._done

    def stop(self) -> None:
        self._player.stop()
        self._finish()

    def pause(self, paused: bool) -> None:
        if paused:
            self._player.pause()
        else:
            self._player.play()


class ReadAloud(QObject):
    """Speaks texts, one sentence after another; ``state`` is idle, speaking or paused."""

    state_changed = Signal(str)
    failed = Signal(str)

    def __init__(self, spawn: Callable[[Any], Any], playback: Callable[[], Playback],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._spawn = spawn
        self._make_playback = playback
        self._playback: Playback | None = None
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._worker: Any = None
        self._folder = Path(tempfile.mkdtemp(prefix="desktop-app-voice-"))
        self._streamed = ""
        self._queued = 0
        self.speed = 1.0
        self.state = "idle"
        self.spoken: list[str] = []

    # --- what to say ----------------------------------------------------------------------
    def read(self, text: str) -> None:
        """Read ``text`` (Markdown) from the start, instead of whatever is being read."""
        self.stop()
        for sentence in sentences(speakable(text)):
            self._queue.put_nowait(sentence)
        self._queue.put_nowait(None)
        self._ensure_worker()

    def feed(self, delta: str) -> None:
        """An answer streaming in: its finished sentences are read as they complete."""
        self._streamed += delta
        done = sentences(speakable(self._streamed))[:-1]  # the last one may go on
        for sentence in done[self._queued:]:
            self._queue.put_nowait(sentence)
        self._queued = max(self._queued, len(done))
        self._ensure_worker()

    def finish(self) -> None:
        """The streamed answer is complete: read the rest."""
        for sentence in sentences(speakable(self._streamed))[self._queued:]:
            self._queue.put_nowait(sentence)
        self._queue.put_nowait(None)
        self._streamed, self._queued = "", 0
        self._ensure_worker()

    # --- control -------------------------------------------------------------------------
    def stop(self) -> None:
        while not self._queue.empty():
            self._queue.get_nowait()
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
        self._worker = None
        if self._playback is not None:
            self._playback.stop()
        self._streamed, self._queued = "", 0
        self._set("idle")

    def pause(self, paused: bool) -> None:
        if self._playback is not None and self.state != "idle":
            self._playback.pause(paused)
            self._set("paused" if paused else "speaking")

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    def _ensure_worker(self) -> None:
        if self._worker is None or self._worker.done():
            self._worker = self._spawn(self._speak_all())

    async def _speak_all(self) -> None:
        """Play queued sentences in order, synthesizing the next while one plays."""
        pending: deque[tuple[str, asyncio.Future[Path]]] = deque()
        ended = False
        number = 0

        def prepare(sentence: str) -> None:
            nonlocal number
            number += 1
            pending.append((sentence, asyncio.ensure_future(self._synthesize(sentence, number))))

        try:
            if self._playback is None:
                self._playback = self._make_playback()  # VoiceError: no speakers
            self._set("speaking")
            while not (ended and not pending):
                if not pending:
                    first = await self._queue.get()
                    if first is None:
                        break
                    prepare(first)
                while not ended and len(pending) < 2 and not self._queue.empty():
                    more = self._queue.get_nowait()
                    if more is None:
                        ended = True
                    else:
                        prepare(more)
                sentence, task = pending.popleft()
                wav = await task
                self.spoken.append(sentence)
                await self._playback.play(wav)
        except VoiceError as exc:
            self.failed.emit(str(exc))
        finally:
            for _sentence, task in pending:
                task.cancel()
            self._set("idle")

    async def _synthesize(self, sentence: str, number: int) -> Path:
        path = self._folder / f"sentence-{id(self)}-{number}.wav"
        return await asyncio.to_thread(synthesize, sentence, path, speed=self.speed)

"""The window's voice controls (issue 29): the microphone button and level meter in the
composer (Ctrl+Shift+Space starts and stops dictation, Esc cancels it), a "Read aloud"
button on every answer, and a status-bar control to stop or pause reading. Everything
runs on this computer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QMenu, QProgressBar, QToolButton

from desktop_app.core.voice import Transcriber, VoiceError
from desktop_app.ui.voice_input import AudioInput, Dictation, Microphone
from desktop_app.ui.voice_output import Playback, ReadAloud, Speakers


class VoiceControls:
    """Dictation into the composer and reading answers aloud, for one main window."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.transcriber = Transcriber()
        #: Where dictation hears from (tests put a sound file here).
        self.input_factory: Callable[[], AudioInput] = Microphone
        self.playback_factory: Callable[[], Playback] = Speakers
        settings = window.ctx.settings.voice
        self.dictation = Dictation(self.transcriber, window.spawn, language=settings.language)
        self.dictation.partial.connect(self._partial)
        self.dictation.final.connect(self._final)
        self.dictation.failed.connect(self._failed)
        self.dictation.level.connect(lambda value: self.meter.setValue(int(value * 100)))
        self.dictation.speech_started.connect(self._barge_in)
        self.dictation.speech_ended.connect(self._utterance_done)
        self.reader = ReadAloud(window.spawn, lambda: self.playback_factory())
        self.reader.speed = settings.speed
        self.reader.failed.connect(self._failed)
        self.reader.state_changed.connect(self._reading)
        self._before = ""
        composer = window.composer
        self.mic = QToolButton(composer)
        self.mic.setObjectName("MicButton")
        self.mic.setText("Dictate")  # (no emoji: many Linux desktops have no emoji font)
        self.mic.setToolTip("Dictate (Ctrl+Shift+Space to start and stop, Esc cancels). "
                            "Speech is transcribed on this computer.")
        self.mic.setCheckable(True)
        self.mic.clicked.connect(self.toggle)
        menu = QMenu(self.mic)
        self.send_on_stop = menu.addAction("Send when I stop")
        self.send_on_stop.setCheckable(True)
        self.send_on_stop.setChecked(settings.send_on_stop)
        self.send_on_stop.toggled.connect(self._send_on_stop)
        self.read_answers = menu.addAction("Read answers aloud as they arrive")
        self.read_answers.setCheckable(True)
        self.read_answers.setChecked(settings.read_answers)
        self.read_answers.toggled.connect(self._read_answers)
        self.hands_free = menu.addAction("Hands-free conversation (headphones advised)")
        self.hands_free.setCheckable(True)
        self.hands_free.toggled.connect(self._hands_free)
        speeds = menu.addMenu("Reading speed")
        for label, value in (("Slower", 0.8), ("Normal", 1.0), ("Faster", 1.25),
                             ("Fastest", 1.5)):
            action = speeds.addAction(label)
            action.setCheckable(True)
            action.setChecked(abs(value - settings.speed) < 0.01)
            action.setData(value)
            action.triggered.connect(lambda _on, v=value: self._speed(v))
        self.speed_menu = speeds
        languages = menu.addMenu("Dictation language")
        for label, code in (("Detect automatically", None), ("English", "en"),
                            ("Deutsch", "de"), ("Español", "es"), ("Français", "fr")):
            action = languages.addAction(label)
            action.setCheckable(True)
            action.setChecked(code == settings.language)
            action.setData(code)
            action.triggered.connect(lambda _on, c=code: self._language(c))
        self.language_menu = languages
        self.mic.setMenu(menu)
        self.mic.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.meter = QProgressBar(composer)
        self.meter.setObjectName("MicLevel")
        self.meter.setRange(0, 100)
        self.meter.setTextVisible(False)
        self.meter.setFixedWidth(60)
        self.meter.setToolTip("What the microphone hears")
        self.meter.hide()
        composer.accessories.addWidget(self.mic)
        composer.accessories.addWidget(self.meter)
        QShortcut(QKeySequence("Ctrl+Shift+Space"), window).activated.connect(self.toggle)
        self.stop_reading = QToolButton(window)
        self.stop_reading.setText("■ Stop reading")
        self.stop_reading.clicked.connect(self.reader.stop)
        self.pause_reading = QToolButton(window)
        self.pause_reading.setText("Pause")
        self.pause_reading.setCheckable(True)
        self.pause_reading.toggled.connect(self._pause)
        for widget in (self.pause_reading, self.stop_reading):
            window.statusBar().addPermanentWidget(widget)
            widget.hide()

    # --- dictation ------------------------------------------------------------------------
    def toggle(self) -> None:
        if self.dictation.active:
            self._listening(False)
            self.dictation.stop()
            return
        self._before = self.window.composer.text()
        try:
            self.dictation.start(self.input_factory())
        except VoiceError as exc:
            self._listening(False)
            self._failed(str(exc))
            return
        self._listening(True)

    def _listening(self, on: bool) -> None:
        self.mic.setChecked(on)
        self.mic.setText("Stop dictating" if on else "Dictate")
        self.meter.setVisible(on)

    def cancel(self) -> bool:
        """Esc while dictating: stop and put the message box back as it was."""
        if not self.dictation.active:
            return False
        self.dictation.cancel()
        self._listening(False)
        self.window.composer.set_text(self._before)
        return True

    def _joined(self, text: str) -> str:
        return f"{self._before.rstrip()} {text}".strip() if self._before.strip() else text

    def _partial(self, text: str) -> None:
        self.window.composer.set_text(self._joined(text))

    def _final(self, text: str) -> None:
        self.window.composer.set_text(self._joined(text))
        hands_free = self.hands_free.isChecked()
        if (self.send_on_stop.isChecked() or hands_free) and text.strip():
            self.window.composer.submit()
        if hands_free and not self.dictation.active:
            self.toggle()  # listen again: the next question, or a barge-in

    # --- hands-free -----------------------------------------------------------------------
    def _hands_free(self, on: bool) -> None:
        """Listen, answer, speak, listen: each pause after speech sends what was said, the
        answer is read aloud, and speaking while it is read stops the reading."""
        if on and not self.dictation.active:
            self.toggle()
        elif not on and self.dictation.active:
            self.cancel()

    def _barge_in(self) -> None:
        if self.hands_free.isChecked() and self.reader.state != "idle":
            self.reader.stop()

    def _utterance_done(self) -> None:
        if self.hands_free.isChecked() and self.dictation.active:
            self.toggle()  # stop: the final text is sent, then listening starts again

    def _failed(self, message: str) -> None:
        self.window.banner.set_status(message)

    # --- reading aloud --------------------------------------------------------------------
    def read(self, turn: Any) -> None:
        self.reader.read(turn.answer_text())

    def _reading(self, state: str) -> None:
        speaking = state != "idle"
        self.stop_reading.setVisible(speaking)
        self.pause_reading.setVisible(speaking)
        if not speaking:
            self.pause_reading.setChecked(False)

    def _pause(self, paused: bool) -> None:
        self.reader.pause(paused)
        self.pause_reading.setText("Resume" if paused else "Pause")

    def _send_on_stop(self, on: bool) -> None:
        self._remember(lambda voice: setattr(voice, "send_on_stop", on))

    def _remember(self, choose: Callable[[Any], None]) -> None:
        """A voice choice is a setting: held at once, saved off the Qt thread."""
        def change(settings: Any) -> bool:
            choose(settings.voice)
            return True

        self.window.spawn(self.window.ctx.update_settings(change))

    def _language(self, code: str | None) -> None:
        self._remember(lambda voice: setattr(voice, "language", code))
        self.dictation.language = code
        for action in self.language_menu.actions():
            action.setChecked(action.data() == code)

    def _speed(self, value: float) -> None:
        self._remember(lambda voice: setattr(voice, "speed", value))
        self.reader.speed = value  # from the next sentence on
        for action in self.speed_menu.actions():
            action.setChecked(action.data() == value)

    def _read_answers(self, on: bool) -> None:
        self._remember(lambda voice: setattr(voice, "read_answers", on))
        if not on:
            self.reader.stop()

    def on_answer_event(self, event: Any) -> None:
        """With 'read answers aloud' (or hands-free) on, the streaming answer is read as it
        comes."""
        if not (self.window.ctx.settings.voice.read_answers or self.hands_free.isChecked()):
            return
        from desktop_app.core.agent.events import AnswerDelta, Done

        if isinstance(event, AnswerDelta) and event.content:
            self.reader.feed(event.content)
        elif isinstance(event, Done):
            self.reader.finish()


"""Voice in the real window with the real offline models (issue 29): a sound file played
through the dictation path as a stand-in microphone lands as text in the message box;
Esc cancels a dictation; with no microphone the message says so; "Read aloud" produces
speech whose transcription is the answer, sentence by sentence, and can be stopped."""

from __future__ import annotations

import asyncio
import wave
from pathlib import Path

import pytest
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.voice import Transcriber, normalise, synthesize, word_error_rate
from desktop_app.ui.voice_input import SoundFileInput

pytestmark = [pytest.mark.gui, pytest.mark.real_model]

SPOKEN = "Remind me to call the dentist on Friday at ten."
ANSWER = ("Paris is the capital of France. It lies on the Seine. "
          "About two million people live there.")


class Recorder:
    """A stand-in for the speakers: keeps what it was given to play."""

    def __init__(self, hold: asyncio.Event | None = None) -> None:
        self.played: list[Path] = []
        self.hold = hold
        self.stopped = False

    async def play(self, wav: Path) -> None:
        self.played.append(wav)
        if self.hold is not None:
            await self.hold.wait()

    def stop(self) -> None:
        self.stopped = True
        if self.hold is not None:
            self.hold.set()

    def pause(self, paused: bool) -> None:
        pass


@pytest.fixture(scope="module")
def spoken_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthesize(SPOKEN, tmp_path_factory.mktemp("voice") / "dictation.wav")


def test_dictation_from_a_sound_device_lands_in_the_message_box(qtbot, loop,
                                                                spoken_wav: Path) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(["ok"]))
        source = SoundFileInput(spoken_wav, speed=2.0)
        window.voice.input_factory = lambda: source
        window.composer.set_text("Note:")
        window.voice.mic.click()
        assert window.voice.dictation.active and window.voice.meter.isVisible()
        await wait_for(lambda: window.voice.meter.value() > 0, timeout=10)  # it hears
        await wait_for(lambda: source.finished, timeout=30)
        partial = window.composer.text()
        window.voice.mic.click()  # stop
        await wait_for(lambda: len(window.composer.text()) > len("Note:") + 20, timeout=60)
        await asyncio.sleep(0.5)
        return partial, window.composer.text(), window.voice.dictation.active

    partial, text, active = loop.run_until_complete(scenario())
    assert not active and text.startswith("Note: ")
    assert word_error_rate(SPOKEN, text[len("Note: "):]) < 0.2, text
    assert partial.startswith("Note:")  # partial text showed while it listened


def test_escape_cancels_dictation_and_no_microphone_is_a_clear_message(
        qtbot, loop, spoken_wav: Path) -> None:
    from PySide6.QtCore import Qt

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(["ok"]))
        window.voice.input_factory = lambda: SoundFileInput(spoken_wav)
        window.composer.set_text("keep me")
        window.voice.mic.click()
        await asyncio.sleep(0.5)
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)
        cancelled = (window.voice.dictation.active, window.composer.text())
        from desktop_app.ui.voice_input import Microphone

        window.voice.input_factory = Microphone  # this machine has none
        window.voice.mic.click()
        return cancelled, window.voice.mic.isChecked(), window.banner.label.text()

    (active, text), checked, message = loop.run_until_complete(scenario())
    assert not active and text == "keep me"
    assert not checked and "No microphone was found" in message


def test_read_aloud_speaks_the_answer_sentence_by_sentence(qtbot, loop, tmp_path: Path) -> None:
    recorder = Recorder()

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(default=ANSWER))
        window.voice.playback_factory = lambda: recorder
        await window.send("Tell me about Paris.")
        await window.controller.wait_idle()
        turn = window.chat.items()[-1]
        assert turn.answer_text() == ANSWER
        turn.read_button.click()
        await wait_for(lambda: window.voice.reader.state == "speaking", timeout=10)
        await wait_for(lambda: window.voice.reader.state == "idle", timeout=120)
        return list(window.voice.reader.spoken)

    spoken = loop.run_until_complete(scenario())
    assert len(spoken) == 3 and len(recorder.played) == 3
    merged = tmp_path / "all.wav"
    with wave.open(str(merged), "wb") as out:
        for index, part in enumerate(recorder.played):
            with wave.open(str(part), "rb") as piece:
                if index == 0:
                    out.setparams(piece.getparams())
                out.writeframes(piece.readframes(piece.getnframes()))
    heard = Transcriber().transcribe(merged, language="en").text
    assert word_error_rate(ANSWER, heard) < 0.15, heard


def test_reading_can_be_stopped_mid_speech(qtbot, loop) -> None:
    hold = asyncio.Event()
    recorder = Recorder(hold)

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(["x"]))
        window.voice.playback_factory = lambda: recorder
        window.voice.reader.read(ANSWER)
        await wait_for(lambda: recorder.played, timeout=60)
        visible = window.voice.stop_reading.isVisible()
        window.voice.stop_reading.click()
        await wait_for(lambda: window.voice.reader.state == "idle", timeout=10)
        await asyncio.sleep(0.5)
        return visible, window.voice.stop_reading.isVisible()

    visible, after = loop.run_until_complete(scenario())
    assert visible and not after and recorder.stopped and len(recorder.played) == 1
    assert normalise(ANSWER)  # (the answer has three sentences; only one was played)


def _silence(path: Path, seconds: float = 30.0) -> Path:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16_000)
        out.writeframes(b"\0\0" * int(16_000 * seconds))
    return path


def test_hands_free_listens_answers_speaks_and_listens_again(qtbot, loop, spoken_wav: Path,
                                                             tmp_path: Path) -> None:
    llm = ScriptedLLM(default=ANSWER)
    recorder = Recorder()
    sources = [SoundFileInput(spoken_wav, speed=2.0)]
    quiet = _silence(tmp_path / "quiet.wav")

    async def scenario():
        window = await make_window(qtbot, llm)
        window.voice.playback_factory = lambda: recorder
        window.voice.input_factory = lambda: sources.pop(0) if sources else SoundFileInput(quiet)
        window.voice.hands_free.setChecked(True)  # listening starts
        assert window.voice.dictation.active
        await wait_for(lambda: llm.calls(), timeout=60)  # the pause after speech sent it
        await window.controller.wait_idle()
        await wait_for(lambda: len(recorder.played) >= 3, timeout=120)  # the answer, spoken
        await wait_for(lambda: window.voice.reader.state == "idle", timeout=60)
        listening = window.voice.dictation.active
        window.voice.hands_free.setChecked(False)
        return listening, llm.calls()[0].last_user_text, window.voice.dictation.active

    listening, asked, after = loop.run_until_complete(scenario())
    assert word_error_rate(SPOKEN, asked) < 0.2, asked
    assert listening and not after


def test_speaking_while_an_answer_is_read_stops_the_reading(qtbot, loop,
                                                            spoken_wav: Path) -> None:
    hold = asyncio.Event()
    recorder = Recorder(hold)

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(["x"]))
        window.voice.playback_factory = lambda: recorder
        window.voice.reader.read(ANSWER)
        await wait_for(lambda: recorder.played, timeout=60)
        window.voice.input_factory = lambda: SoundFileInput(spoken_wav)
        window.voice.hands_free.setChecked(True)  # the user starts talking: barge-in
        await wait_for(lambda: window.voice.reader.state == "idle", timeout=20)
        window.voice.hands_free.setChecked(False)
        return recorder.stopped, len(recorder.played)

    stopped, played = loop.run_until_complete(scenario())
    assert stopped and played == 1


def test_the_reading_speed_is_chosen_in_the_menu(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(["x"]))
        [faster] = [a for a in window.voice.speed_menu.actions() if a.text() == "Faster"]
        faster.trigger()
        checked = [a.text() for a in window.voice.speed_menu.actions() if a.isChecked()]
        return window.voice.reader.speed, window.ctx.settings.voice.speed, checked

    assert loop.run_until_complete(scenario()) == (1.25, 1.25, ["Faster"])


def test_the_dictation_language_is_chosen_in_the_menu(qtbot, loop) -> None:
    from desktop_app.core.config.settings import load_settings

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(["x"]))
        window.ctx.persist_settings = True
        [german] = [a for a in window.voice.language_menu.actions() if a.text() == "Deutsch"]
        german.trigger()
        await wait_for(lambda: load_settings().voice.language == "de")  # saved too
        return window.voice.dictation.language, window.ctx.settings.voice.language

    assert loop.run_until_complete(scenario()) == ("de", "de")

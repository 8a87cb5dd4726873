"""Offline voice with the real models (Whisper base through faster-whisper, a Piper voice),
installed from PyPI: known sentences spoken by two different synthetic voices (Piper, and
espeak-ng from Debian) are transcribed with a word error rate under 10 %; the CLI's
transcribe, say and chat --voice-out work end to end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.cli import main
from desktop_app.core.voice import Transcriber, normalise, synthesize, word_error_rate

pytestmark = pytest.mark.real_model

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from fake_openai_server import Reply, chunk, fake_server, use_endpoint  # noqa: F401

SENTENCES = [
    "The meeting moved from Tuesday to Thursday at 3 pm.",
    "Please call Maria Lopez before noon tomorrow.",
    "My flight to Berlin leaves at 7:45 in the morning.",
    "The invoice total is 240 dollars and 50 cents.",
    "Doctor Patel said the results look good.",
    "Add milk, eggs, and bread to the shopping list.",
    "The package weighs 12 kilograms.",
    "Remind me to water the plants on Sunday.",
    "How many days are there until the 25th of December?",
    "Convert 10 miles into kilometers.",
    "Jupiter is the largest planet in our solar system.",
    "Send the report to the team by Friday evening.",
    "The password for the guest network is on the fridge.",
    "Turn left after the second traffic light.",
    "Our anniversary is on the 14th of February.",
    "The recipe needs 2 cups of flour and 3 eggs.",
    "Can you translate good morning into Spanish?",
    "The train to Paris was delayed by 20 minutes.",
    "Write a short poem about the autumn rain.",
    "The library closes at 6 pm on Saturdays.",
    "Ask Thomas whether the car is ready.",
    "What is 15 percent of 80?",
]


@pytest.fixture(scope="module")
def transcriber() -> Transcriber:
    return Transcriber()


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("spoken")


def _rate(pairs: list[tuple[str, str]]) -> float:
    words = sum(len(reference.split()) for reference, _ in pairs)
    errors = sum(word_error_rate(reference, heard) * len(reference.split())
                 for reference, heard in pairs)
    return errors / words


def test_piper_speech_is_transcribed_with_under_10_percent_errors(
        transcriber: Transcriber, spoken: Path) -> None:
    pairs = []
    for index, sentence in enumerate(SENTENCES):
        wav = synthesize(sentence, spoken / f"piper-{index}.wav")
        pairs.append((sentence, transcriber.transcribe(wav, language="en").text))
    rate = _rate(pairs)
    assert rate < 0.10, [(r, h) for r, h in pairs if word_error_rate(r, h) > 0]


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_a_second_different_voice_is_transcribed_too(transcriber: Transcriber,
                                                     spoken: Path) -> None:
    pairs = []
    for index, sentence in enumerate(SENTENCES):
        wav = spoken / f"espeak-{index}.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(wav), sentence],
                       check=True, capture_output=True, timeout=60)
        pairs.append((sentence, transcriber.transcribe(wav, language="en").text))
    rate = _rate(pairs)
    assert rate < 0.10, [(r, h) for r, h in pairs if word_error_rate(r, h) > 0]


def test_the_cli_says_and_transcribes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wav = tmp_path / "hello.wav"
    assert main(["voice", "say", "Good morning, **Anna**. The bus leaves at 8.", "-o",
                 str(wav)]) == 0
    assert main(["voice", "transcribe", str(wav), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["language"] == "en" and result["segments"]
    assert word_error_rate("Good morning Anna. The bus leaves at 8.", result["text"]) < 0.15
    assert main(["voice", "transcribe", str(tmp_path / "missing.wav")]) == 2
    assert "There is no sound file" in capsys.readouterr().err


def test_chat_reads_its_answer_aloud(fake_server, app_home: Path, tmp_path: Path,  # noqa: F811
                                     transcriber: Transcriber,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    use_endpoint(app_home, fake_server.base_url)
    fake_server.add(Reply(sse=[chunk("The capital of France "), chunk("is **Paris**."),
                               chunk(finish_reason="stop")]))
    out = tmp_path / "answer.wav"
    assert main(["chat", "--voice-out", str(out), "Capital of France?"]) == 0
    assert "Paris" in capsys.readouterr().out
    heard = normalise(transcriber.transcribe(out, language="en").text)
    assert heard.startswith("the capital of") and "paris" in heard, heard

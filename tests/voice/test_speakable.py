"""What is read aloud of an answer, and how speech is scored (no models needed)."""

from __future__ import annotations

from desktop_app.core.voice import normalise, sentences, speakable, word_error_rate


def test_markdown_code_tables_and_citations_are_not_read_as_symbols() -> None:
    answer = ("## Summary\nThe **meeting** moved to *Thursday* [1].\n\n"
              "- Bring the `report`\n- See [the plan](https://example.com/plan)\n\n"
              "```python\nprint('hi')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    spoken = speakable(answer)
    assert "Summary." in spoken and "The meeting moved to Thursday." in spoken
    assert "Bring the report." in spoken and "See the plan." in spoken
    assert "(code shown on screen)" in spoken
    for symbol in ("#", "*", "`", "[1]", "|", "https", "print"):
        assert symbol not in spoken, symbol


def test_sentences_split_where_a_reader_pauses() -> None:
    assert sentences("It is 3.5 km away. Dr. Smith agrees! Why? Because.") == [
        "It is 3.5 km away.", "Dr. Smith agrees!", "Why?", "Because."]


def test_word_error_rate_ignores_case_punctuation_and_how_numbers_are_written() -> None:
    assert word_error_rate("The train leaves at 3 pm, on platform Nine.",
                           "the train leaves at 3pm on platform 9") == 0
    assert normalise("Two % of 1,200 at 3PM") == "2 percent of 1200 at 3 pm"
    assert word_error_rate("one two three four", "one two four") == 0.25


def test_a_damaged_voice_file_is_refused(tmp_path, monkeypatch) -> None:
    import pytest

    from desktop_app.core.voice import VoiceError, models

    fake = tmp_path / "data"
    fake.mkdir()
    (fake / "en_US-joe-medium.onnx").write_bytes(b"not a voice")
    (fake / "en_US-joe-medium.onnx.json").write_text("{}")
    monkeypatch.setattr(models, "_package_data", lambda _name: fake)
    with pytest.raises(VoiceError, match="damaged"):
        models.piper_voice()

"""Parsing tool calls in a model's own format, and deciding early what to show (no model)."""

from __future__ import annotations

import json
import logging

import pytest

from desktop_app.core.llm.llama_replies import known_calls
from desktop_app.core.llm.text_calls import could_open_a_call
from desktop_app.core.llm.tool_format import (
    ToolCallSniffer,
    call_shaped,
    closest_tool,
    detect_tool_style,
    parse_tool_reply,
)

KNOWN = {"calculator", "convert_units", "note_create", "notes_find", "write_file", "read_file",
         "list_files", "make_table", "current_time"}


@pytest.mark.parametrize(("template", "style"), [
    ("{% if tools %}<tool_call>{{ tool }}</tool_call>{% endif %}", "hermes"),
    ("{% if tools %}[AVAILABLE_TOOLS]{% endif %}[TOOL_CALLS]", "mistral"),
    ("{% if tools %}<|python_tag|>{% endif %}", "llama3"),
    ("{{ messages }}<|im_start|>", None),
    (None, None),
])
def test_the_tool_style_is_read_from_the_template(template: str | None, style: str | None) -> None:
    assert detect_tool_style(template) == style


def _args(text: str) -> dict[str, object]:
    result = parse_tool_reply(text, KNOWN)
    assert len(result.calls) == 1, result
    return {"name": result.calls[0].name, **json.loads(result.calls[0].arguments)}


def test_hermes_tags_are_a_call() -> None:
    text = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "2+2"}}\n</tool_call>'
    assert _args(text) == {"name": "calculator", "expression": "2+2"}


def test_a_fenced_or_bare_json_call_to_a_known_tool_is_a_call() -> None:
    fenced = '```json\n{"name": "convert_units", "arguments": {"value": 1, "from_unit": "km", "to_unit": "mi"}}\n```'
    assert _args(fenced)["name"] == "convert_units"
    assert _args('{"name": "current_time", "arguments": {"timezone": "Asia/Tokyo"}}')[
        "timezone"] == "Asia/Tokyo"


def test_json_the_user_asked_for_is_not_a_call() -> None:
    assert parse_tool_reply('{"name": "Alice", "age": 30}', KNOWN).calls == []
    assert parse_tool_reply('{"name": "calculator", "age": 30}', KNOWN).calls == []
    assert not call_shaped('{"name": "Alice", "age": 30}')


def test_repeated_json_lines_are_one_call() -> None:
    line = '{"name": "calculator", "arguments": {"expression": "98765 / 43"}}'
    result = parse_tool_reply("\n".join([line] * 5), KNOWN)
    assert [c.name for c in result.calls] == ["calculator"]


def test_a_call_cut_off_by_the_token_limit_is_still_read() -> None:
    text = '{"name": "notes_find", "arguments": {"query": "wifi"}'
    assert _args(text) == {"name": "notes_find", "query": "wifi"}


def test_mistral_and_llama3_formats() -> None:
    mistral = '[TOOL_CALLS][{"name": "calculator", "arguments": {"expression": "1+1"}}]'
    assert _args(mistral)["expression"] == "1+1"
    llama = '<|python_tag|>{"name": "calculator", "parameters": {"expression": "3*3"}}'
    assert _args(llama)["expression"] == "3*3"


def test_text_before_a_tag_is_the_content() -> None:
    result = parse_tool_reply('Let me check.\n<tool_call>{"name": "current_time", '
                              '"arguments": {}}</tool_call>', KNOWN)
    assert result.content == "Let me check." and result.calls[0].name == "current_time"


def test_broken_json_in_a_tag_still_names_the_tool_so_the_model_learns_why() -> None:
    result = parse_tool_reply('<tool_call>{"name": "calculator", "arguments": {"expression": '
                              '"2+"2"}}}</tool_call>', KNOWN)
    assert result.calls and result.calls[0].name == "calculator"
    with pytest.raises(ValueError):
        json.loads(result.calls[0].arguments)


def _feed(sniffer: ToolCallSniffer, pieces: list[str]) -> str:
    return "".join(sniffer.feed(p) for p in pieces)


def test_prose_is_released_from_its_first_word() -> None:
    sniffer = ToolCallSniffer(KNOWN)
    assert sniffer.feed("A") == "A" and sniffer.is_answer
    assert sniffer.feed(" generator yields") == " generator yields"


def test_a_possible_tag_is_held_until_it_is_known() -> None:
    sniffer = ToolCallSniffer(KNOWN)
    assert _feed(sniffer, ["\n", "<tool", "_call>", '{"name": "calculator"']) == ""
    assert sniffer.is_call


def test_a_code_fence_for_python_is_an_answer_but_json_is_held() -> None:
    code = ToolCallSniffer(KNOWN)
    assert _feed(code, ["```py", "thon\n", "def f(): pass"]).startswith("```python")
    held = ToolCallSniffer(KNOWN)
    assert _feed(held, ["```json\n", '{"name": "calculator"']) == "" and held.is_call


def test_a_json_answer_is_shown_whole_at_the_end() -> None:
    sniffer = ToolCallSniffer(KNOWN)
    assert _feed(sniffer, ['{"name": "Alice",', ' "age": 30}']) == ""
    assert sniffer.finish() == '{"name": "Alice", "age": 30}' and not sniffer.parse().calls


def test_prose_then_a_tag_stops_the_flow_at_the_tag() -> None:
    sniffer = ToolCallSniffer(KNOWN)
    shown = _feed(sniffer, ["Sure. ", "<tool_", 'call>{"name": "current_time"}'])
    assert shown == "Sure. " and sniffer.is_call and sniffer.shown


def test_a_finished_bare_call_followed_by_more_is_complete() -> None:
    sniffer = ToolCallSniffer(KNOWN)
    line = '{"name": "calculator", "arguments": {"expression": "1+1"}}'
    sniffer.feed(line)
    assert not sniffer.complete()
    sniffer.feed("\n{")
    assert sniffer.complete()


def test_call_shaped_text_to_a_made_up_tool() -> None:
    assert call_shaped('```json\n{"name": "reverse_string", "arguments": {"s": "x"}}\n```')
    assert call_shaped('{"name": "guest_wifi", "arguments": {"q": "x"}')  # cut off
    assert not call_shaped("The capital is Paris.")


@pytest.mark.parametrize(("made_up", "meant"), [
    ("create_note", "note_create"), ("create_file", "write_file"),
    ("get_current_time", "current_time"), ("create_table", "make_table"),
    ("find_notes", "notes_find"), ("calculate", "calculator"),
    ("reverse_string", None), ("translate", None), ("sum", None),
])
def test_made_up_tool_names_map_only_when_clearly_meant(made_up: str, meant: str | None) -> None:
    assert closest_tool(made_up, KNOWN) == meant


@pytest.mark.parametrize("style", ["hermes", "mistral", None])
def test_a_name_choice_grammar_allows_only_the_given_names(style: str | None) -> None:
    """The grammar the routing policy chooses again under after a made-up call name: the
    call's opening in the model's format, then one of the names, and nothing else."""
    from llama_cpp.llama_grammar import LlamaGrammar

    from desktop_app.core.llm.llama_messages import name_choice_grammar

    grammar = name_choice_grammar(["calculator", "reply"], style)  # type: ignore[arg-type]
    LlamaGrammar.from_string(grammar, verbose=False)  # valid GBNF for llama.cpp
    wrapper = {"hermes": "<tool_call>\n", "mistral": "[TOOL_CALLS]["}.get(style or "", "")
    opening, quote = json.dumps(wrapper + '{"name": "'), json.dumps('"')
    assert grammar == f'root ::= {opening} ("calculator" | "reply") {quote}\n'


def test_properties_named_like_schema_keywords_are_kept() -> None:
    from desktop_app.core.llm.llama_messages import compact_tools, forced_call_grammar
    from desktop_app.core.tools.builtin.notes import NoteCreateTool

    [spec] = compact_tools([NoteCreateTool().spec()])
    params = spec["function"]["parameters"]
    # "title" is a schema annotation word, but here it is the note's required title.
    assert set(params["properties"]) == {"title", "text", "tags"}
    assert params["required"] == ["title", "text"]
    assert "title-kv" in forced_call_grammar(spec, "hermes")
    odd = compact_tools([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "title": "Args", "properties": {
            "default": {"type": "string", "title": "Default", "description": "d"}}}}}])
    kept = odd[0]["function"]["parameters"]
    assert "title" not in kept and kept["properties"] == {
        "default": {"type": "string", "description": "d"}}


@pytest.mark.parametrize(("text", "could_be_call"), [
    ("", True), ("  ", True), ("<tool", True), ("<tool_call>\n{", True),
    ('{"na', True), ('{"name": "calculator"', True), ('[{"function"', True),
    ("```json\n", True), ('```json\n{"name"', True), ("```", True),
    ("Paris is the capital.", False), ("[Paris](https://example.org)", False),
    ("[1] Smith, 2020", False), ('{"city": "Paris"}', False), ("```python\nprint(1)", False),
    ("```json\nhello", False), ("`x`", False),
])
def test_a_held_reply_is_released_once_its_start_cannot_be_a_call(
        text: str, could_be_call: bool) -> None:
    # The hosted path's hold-back and the sniffer read a reply's opening with one function,
    # so the two cannot disagree about what a call looks like.
    assert could_open_a_call(text) is could_be_call


def test_a_call_to_no_offered_tool_is_dropped_with_its_name_logged(
        caplog: pytest.LogCaptureFixture) -> None:
    sniffer = ToolCallSniffer(KNOWN)
    sniffer.feed('<tool_call>\n{"name": "calculator", "arguments": {"expression": "2+2"}}\n'
                 '</tool_call>\n<tool_call>\n{"name": "weather_lookup", "arguments": '
                 '{"city": "my home town"}}\n</tool_call>')
    with caplog.at_level(logging.INFO, logger="desktop_app.core.llm.llama_replies"):
        calls = known_calls(sniffer, KNOWN)
    assert [c.name for c in calls] == ["calculator"]
    assert "weather_lookup" in caplog.text
    assert "my home town" not in caplog.text  # arguments may be private

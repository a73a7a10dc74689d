"""JSON extraction, repetition-loop detection and the <think> filter on small models' replies, and the
context-window readers."""

from __future__ import annotations

import pytest

from adapters.models.context_window import fitted_max_tokens, window_from_models, window_from_props
from adapters.models.output_checks import extract_json, repetition_loop
from adapters.models.think_filter import ThinkFilter, strip_thinking


@pytest.mark.parametrize(
    ("reply", "document"),
    [
        ('{"sufficient": true}', '{"sufficient": true}'),
        ('```json\n{"sufficient": true}\n```', '{"sufficient": true}'),
        ('判断如下:\n```\n{"a": [1, 2]}\n```', '{"a": [1, 2]}'),
        ('结果:{"sufficient": false, "missing": "x"} 以上。', '{"sufficient": false, "missing": "x"}'),
        ('说明 {不是JSON} 然后 {"ok": 1}', '{"ok": 1}'),
    ],
)
def test_the_json_document_is_found_in_fences_and_prose(reply: str, document: str) -> None:
    """Whole, fenced, or embedded after prose: the first complete JSON object is the reply."""
    assert extract_json(reply) == document


@pytest.mark.parametrize("reply", ["资料充分。", '{"sufficient": false, "missing": "继承顺', ""])
def test_prose_or_cut_json_has_no_document(reply: str) -> None:
    """Prose only, or JSON cut mid-string, yields None (the caller reports invalid output)."""
    assert extract_json(reply) is None


def test_a_repeated_clause_is_a_loop_and_ordinary_text_is_not() -> None:
    """Eight copies of one clause at the end is a loop; a repeated word in prose, a table rule, or JSON is not."""
    assert repetition_loop("开头" + "遗嘱是否需要？" * 9) is not None
    assert repetition_loop('{"missing": "' + "啊" * 60) == "啊"
    assert repetition_loop("哈哈哈,这条规定很清楚。遗嘱需要两名见证人。") is None
    assert repetition_loop("| 项目 | 金额 |\n|---|---|\n| 住宿 | 500 |") is None
    assert repetition_loop('{"sufficient": true, "missing": "", "queries": []}') is None
    assert repetition_loop("   " * 40) is None


def test_context_windows_are_read_from_props_and_models() -> None:
    """llama.cpp /props (nested or flat), vLLM max_model_len, llama.cpp meta.n_ctx_train; junk is ignored."""
    assert window_from_props({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert window_from_props({"n_ctx": 2048}) == 2048
    assert window_from_props({"n_ctx": "big"}) is None
    models = {"data": [{"id": "a", "max_model_len": 32768}, {"id": "b", "meta": {"n_ctx_train": 8192}}]}
    assert window_from_models(models, "a") == 32768
    assert window_from_models(models, "b") == 8192
    assert window_from_models(models, "c") is None
    assert window_from_models({"data": [{"id": "only", "meta": {"n_ctx_train": 1024}}]}, "other") == 1024


def test_max_tokens_is_lowered_only_when_the_window_is_short() -> None:
    """The reply gets what the window leaves beside the (margined) prompt estimate, never more than asked."""
    assert fitted_max_tokens(1000, 1500, None) == 1500
    assert fitted_max_tokens(1000, 1500, 32768) == 1500
    assert fitted_max_tokens(1000, 1500, 2000) == 2000 - 1150 - 32
    assert fitted_max_tokens(4000, 1500, 4096) < 0


@pytest.mark.parametrize(
    ("pieces", "visible"),
    [
        (["<think>x</think>\n\n答案"], "答案"),
        (["<th", "ink>推", "理</th", "ink>", "\n", "\n答", "案"], "答案"),
        (["  ", "答案"], "  答案"),
        (["答案 <think>not leading</think>"], "答案 <think>not leading</think>"),
        (["<thi"], "<thi"),
        (["<think>never closed"], ""),
    ],
)
def test_think_filter_removes_only_a_leading_block(pieces: list[str], visible: str) -> None:
    """A leading <think> block is removed even when its tags are split across pieces; other text stays."""
    stripper = ThinkFilter()
    out = "".join(stripper.feed(piece) for piece in pieces) + stripper.flush()
    assert out == visible == strip_thinking("".join(pieces))

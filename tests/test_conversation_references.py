"""Pure pieces behind the CLI: conversation references, scopes, contiguous citations, blank files, clipping."""

from __future__ import annotations

import pytest

from adapters.extractive.answer import not_found_line
from core.answering.answer import contiguous_citations
from core.budget import clip, count_tokens
from core.conversation.references import choose, exact_forms, resolve_conversation
from core.errors import InvalidInput, NotFound
from core.knowledge.ingest_plan import EMPTY_FILE, NO_TEXT, blank_reason
from core.messages import CORE
from core.models import ConversationKey, ConversationScope
from core.record import CitedSource
from tests.fakes import InMemoryConversationStore
from tests.stored import stored_question

THREAD = "slack:T1:C1:1700000000.000100"


def test_an_id_round_trips_through_its_key() -> None:
    """from_id inverts as_id, for terminal names, Slack threads and ids with extra colons."""
    for conversation_id in ("cli::7d17a67bb665:", THREAD, "cli::cli::7d17a67bb665::", "demo::demo-1:"):
        assert ConversationKey.from_id(conversation_id).as_id() == conversation_id


def test_exact_forms_spell_out_a_whole_id_or_source_and_name() -> None:
    """A four-part id is itself; source:NAME fills the empty parts; anything else is no exact form."""
    assert exact_forms(f" {THREAD} ") == [THREAD]
    assert exact_forms("cli:7d17a67bb665") == ["cli::7d17a67bb665:"]
    assert exact_forms("7d17a67bb665") == [] == exact_forms("a:b:c")


def test_choose_prefers_exact_names_then_a_unique_prefix() -> None:
    """A name or thread equal to the reference wins; a prefix needs four characters and one match."""
    matches = ["cli::abcd:", "cli::abcdef:"]
    assert choose("abcd", matches) == "cli::abcd:"
    assert choose("abcde", ["cli::abcdef:"]) == "cli::abcdef:"
    assert choose("1700000000.000100", [THREAD]) == THREAD
    with pytest.raises(NotFound):
        choose("abc", ["cli::abcdef:"])
    with pytest.raises(InvalidInput, match="cli::abcd1:, cli::abcd2:"):
        choose("abcd", ["cli::abcd1:", "cli::abcd2:"])


async def test_resolve_never_creates_and_never_widens_a_whole_id() -> None:
    """An unknown whole id is NotFound even when a longer id starts with it; nothing is created."""
    store = InMemoryConversationStore()
    await stored_question(store, ConversationKey(source="cli", channel_id="abcdef"), "q")
    assert await resolve_conversation(store, "cli:abcdef") == "cli::abcdef:"
    assert await resolve_conversation(store, "abcd") == "cli::abcdef:"
    with pytest.raises(NotFound):
        await resolve_conversation(store, "cli::abc:")
    with pytest.raises(InvalidInput):
        await resolve_conversation(store, "  ")
    assert list(store.conversations) == ["cli::abcdef:"]


def test_a_scope_reads_back_from_json_and_drops_unknown_modes() -> None:
    """to_dict/from_dict round-trip; a mode this version does not know reads back as the default."""
    scope = ConversationScope(datasets=("法规",), search_mode="keywords", retrieval_mode="multi")
    assert ConversationScope.from_dict(scope.to_dict()) == scope
    assert ConversationScope.from_dict({"datasets": ["a"], "search_mode": "fuzzy"}) == ConversationScope(
        ("a",)
    )


def test_citations_are_renumbered_without_gaps() -> None:
    """Sources [1] [2] [3] [6] become [1] [2] [3] [4], in the answer text too; other markers stay."""
    items = [CitedSource(n, f"d{n}") for n in (1, 2, 3, 6)]
    answer, renumbered = contiguous_citations("a[1] b[3] c[6] d[2] e[9]", items)
    assert answer == "a[1] b[3] c[4] d[2] e[9]"
    assert [(item.n, item.document) for item in renumbered] == [
        (1, "d1"),
        (2, "d2"),
        (3, "d3"),
        (4, "d6"),
    ]
    unchanged = [CitedSource(1, ""), CitedSource(2, "")]
    assert contiguous_citations("x[1][2]", unchanged) == ("x[1][2]", unchanged)


def test_blank_files_are_recognised_before_chunking() -> None:
    """Empty and whitespace-only text, and front matter or comments alone, have nothing to search."""
    assert blank_reason("") == blank_reason(" \n\t\n") == EMPTY_FILE
    assert blank_reason("---\nbookCollapseSection: true\n---\n") == NO_TEXT
    assert blank_reason("\ufeff<!-- INFO END -->\n\u200b") == NO_TEXT
    assert blank_reason("# 标题\n\n正文") is None


def test_a_clip_without_marker_is_a_plain_prefix() -> None:
    """marker=False cuts within the budget and adds no truncation marker (for searched text)."""
    text = "word " * 2000
    cut = clip(text, 100, marker=False)
    assert count_tokens(cut) <= 100 and text.startswith(cut)
    assert not any(marker in cut for marker in CORE.in_every_language("budget.truncated"))
    assert CORE.text("budget.truncated", "en") in clip(text, 100)


def test_a_not_found_line_quotes_a_long_question_shortened() -> None:
    """The extractive "no information about …" line quotes at most 80 characters of the question."""
    line = not_found_line("deadline " * 500, "en")
    assert len(line) < 140 and line.endswith('…".')
    assert not_found_line("年假", "zh") == "资料中未找到关于「年假」的信息。"


def test_small_model_marker_forms_are_read_and_written_as_n() -> None:
    """[编号2] and [source 1] (what Qwen2.5 1.5B writes) count as citations and are shown as [2] and [1]."""
    from core.answering.answer import cited_numbers

    assert cited_numbers("住宿 450 元[编号2],报销 30 天[source 1]。", 3) == [2, 1]
    items = [CitedSource(1, "a"), CitedSource(2, "b")]
    assert contiguous_citations("住宿[编号2],报销[1]", items) == ("住宿[2],报销[1]", items)

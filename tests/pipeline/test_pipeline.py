"""The question pipeline: order of steps, history, rewrite, persistence and failures."""

from __future__ import annotations

import asyncio

from core.commands import Ask
from core.errors import ModelRejected, ModelTruncated, ModelUnavailable
from core.events import (
    Accepted,
    AnswerDelta,
    Compacting,
    ContextLoading,
    Done,
    Failed,
    Generating,
    Notice,
    Queued,
    Retrieving,
)
from core.models import ConversationKey, ConversationScope, RecordStatus
from tests.fakes import FakeEngine
from tests.pipeline.conftest import KEY, Harness, build_harness
from tests.stored import stored_question


def _final(events: list[object]) -> object:
    return events[-1]


async def test_first_question_makes_no_rewrite_call_and_is_answered(harness: Harness) -> None:
    """A first question goes straight to search and generation; the record is answered with citations."""
    harness.kb.add("p1", "年假一般为 5 天", document="休假制度")
    events = await harness.ask("年假有几天?")
    assert harness.engine.calls("rewrite") == []
    assert [type(e) for e in events[:4]] == [Accepted, ContextLoading, Retrieving, Generating]
    done = _final(events)
    assert isinstance(done, Done)
    assert done.record.status == RecordStatus.ANSWERED
    assert done.record.details.citations[0].document == "休假制度"
    assert done.record.details.trace is not None and done.record.details.trace.rewritten == "年假有几天?"
    assert "".join(e.text for e in events if isinstance(e, AnswerDelta)) == done.record.answer


async def test_follow_up_is_rewritten_with_history_and_the_rewrite_is_stored(harness: Harness) -> None:
    """A follow-up triggers one rewrite call with the earlier turn, and the search uses the rewritten question."""
    conversation_id = KEY.as_id()
    await harness.store.answered(conversation_id, "Java 有哪些基本数据类型", "byte short int long ...")
    harness.engine.rewrites.append("Java 基本数据类型各自占用多少内存")
    events = await harness.ask("那它们各自占用多少内存?")
    ((history, question),) = harness.engine.calls("rewrite")
    assert [t.question for t in history] == ["Java 有哪些基本数据类型"]
    assert question == "那它们各自占用多少内存?"
    assert harness.kb.queries == ["Java 基本数据类型各自占用多少内存"]
    done = _final(events)
    assert isinstance(done, Done) and done.record.rewritten == "Java 基本数据类型各自占用多少内存"


async def test_two_questions_at_once_are_answered_in_order_with_history() -> None:
    """Two questions sent together never interleave; the second sees the first's answer in its history."""
    harness = build_harness()
    harness.kb.add("p1", "问题一 问题二 的资料", document="d")
    harness.engine.answer_delay = 0.01
    harness.engine.answers.extend([["first ", "answer"], ["second ", "answer"]])
    first, second = await asyncio.gather(harness.ask("问题一"), harness.ask("问题二"))
    assert any(isinstance(e, Queued) for e in second)
    assert isinstance(first[-1], Done) and isinstance(second[-1], Done)
    assert first[-1].record.id < second[-1].record.id
    assert first[-1].record.updated_at <= second[-1].record.updated_at
    requests = harness.engine.calls("answer")
    assert [m.content for m in requests[1].history] == ["问题一", "first answer"]
    assert requests[0].history == ()


async def test_dialogue_number_zero_sends_no_history() -> None:
    """KB_DIALOGUE_NUMBER=0 disables history: no history read, no rewrite, no history messages."""
    harness = build_harness(dialogue_number=0)
    await harness.store.answered(KEY.as_id(), "earlier", "earlier answer")
    await harness.ask("what about it?")
    assert harness.engine.calls("rewrite") == []
    assert harness.engine.calls("answer")[0].history == ()
    assert harness.store.turn_queries == []


async def test_history_is_read_with_a_limit_and_excludes_the_current_record() -> None:
    """Only the latest N turns are read, with a LIMITed query, and the current question never appears."""
    harness = build_harness(dialogue_number=2)
    for i in range(6):
        await harness.store.answered(KEY.as_id(), f"q{i}", f"a{i}")
    await harness.ask("next")
    assert harness.store.turn_queries == [("recent_turns", 2)]
    history, _ = harness.engine.calls("rewrite")[0]
    assert [t.question for t in history] == ["q4", "q5"]


async def test_bad_input_gets_a_clear_error_and_stores_nothing(harness: Harness) -> None:
    """Empty, blank, overlong and binary questions fail before any record or model call."""
    for text in ["", "   \n\t", "字" * 5000, "\x00\x01\x02binary\x00garbage"]:
        events = await harness.ask(text)
        assert len(events) == 1 and isinstance(events[0], Failed)
        assert events[0].record is None
    long = await harness.ask("字" * 5000)
    assert isinstance(long[0], Failed) and long[0].code == "question_too_long" and "5000" in long[0].message
    assert harness.store.records == {}
    assert harness.engine.history == []


async def test_failed_generation_marks_the_record_failed_never_answered(harness: Harness) -> None:
    """A model failure during the answer marks the record failed with the reason; nothing is answered."""
    harness.engine.answers.append(ModelUnavailable("boom"))
    events = await harness.ask("年假有几天?")
    failed = _final(events)
    assert isinstance(failed, Failed) and failed.code == "model_unavailable"
    record = harness.store.records[1]
    assert record.status == RecordStatus.FAILED and record.answer is None
    assert "model_unavailable" in record.details.failure


async def test_a_failed_model_answer_degrades_to_the_fallback_engine_with_a_notice() -> None:
    """When the answer model fails, the fallback engine answers with a visible notice and is recorded."""
    fallback = FakeEngineNamed("extractive")
    harness = build_harness(fallback=fallback)
    harness.kb.add("p1", "年假 5 天", document="休假制度")
    harness.engine.answers.append(ModelUnavailable("500 after retries"))
    events = await harness.ask("年假有几天?")
    done = _final(events)
    assert isinstance(done, Done)
    assert any(isinstance(e, Notice) and e.kind == "degraded" for e in events)
    assert done.record.details.engine == "extractive (fallback)"
    assert done.record.answer is not None and done.record.answer.startswith("模型服务暂时不可用")


async def test_an_answer_of_citation_markers_only_degrades_to_the_fallback_with_a_notice_saying_so() -> None:
    """A model answering "[1] [2]" has said nothing a reader can use: the fallback answers, and the notice says
    the model's answer held only markers (not that the service is down)."""
    fallback = FakeEngineNamed("extractive")
    harness = build_harness(fallback=fallback)
    harness.kb.add("p1", "年假 5 天", document="休假制度")
    harness.engine.answers.append(["[1]", " [2]"])
    done = _final(await harness.ask("年假有几天?"))
    assert isinstance(done, Done) and done.record.answer is not None
    assert done.record.details.engine == "extractive (fallback)"
    assert done.record.answer.startswith("模型的回答只有引用编号")
    assert "answer_without_content" in done.record.details.answer_error


async def test_the_prompts_element_tags_a_model_copies_into_its_answer_are_not_stored_or_shown() -> None:
    """A small model copies the evidence's tags on lines of their own (an attribute holding ">" included): the
    stored answer keeps its words, not the tag lines; a tag inside a sentence (a page about markup) stays."""
    harness = build_harness()
    harness.kb.add("p1", "年假 5 天", document="休假制度")
    harness.engine.answers.append(
        [
            '<paragraph n="1" document="休假制度 | 总则 > 年假">\n年假 5 天[1]。\n\n</paragraph>\n\n<evidence>\n',
            "用 <paragraph> 分段 [1]。",
        ]
    )
    done = _final(await harness.ask("年假有几天?"))
    assert isinstance(done, Done) and done.record.answer is not None
    assert "</paragraph>" not in done.record.answer and "<evidence" not in done.record.answer
    assert 'document="' not in done.record.answer
    assert done.record.answer.startswith("年假 5 天[1]。\n\n用 <paragraph> 分段")


async def test_a_refused_model_request_degrades_with_a_notice_naming_the_status_not_try_again() -> None:
    """A 401 from the answer model: the fallback answers, and its notice names the refusal and its status
    instead of calling the service temporarily unavailable."""
    fallback = FakeEngineNamed("extractive")
    harness = build_harness(fallback=fallback)
    harness.kb.add("p1", "年假 5 天", document="休假制度")
    harness.engine.answers.append(ModelRejected("invalid api key", status=401))
    done = _final(await harness.ask("年假有几天?"))
    assert isinstance(done, Done) and done.record.answer is not None
    assert done.record.answer.startswith("模型服务拒绝了请求(HTTP 401")
    assert "暂时不可用" not in done.record.answer and "稍后再试" not in done.record.answer


async def test_notice_is_appended_exactly_when_evidence_is_insufficient(harness: Harness) -> None:
    """No hits -> insufficient -> the uncertainty notice ends the answer; with hits there is none."""
    events = await harness.ask("完全无关的问题")
    done = _final(events)
    assert isinstance(done, Done) and done.record.details.notice
    assert done.record.answer is not None and done.record.answer.endswith(done.record.details.notice)
    assert any(isinstance(e, Notice) for e in events)
    harness.kb.add("p1", "完全无关的问题的答案", document="d")
    events = await harness.ask("完全无关的问题")
    assert isinstance(events[-1], Done) and events[-1].record.details.notice is None
    assert not any(isinstance(e, Notice) for e in events)


async def test_a_truncated_rewrite_is_never_used(harness: Harness) -> None:
    """finish_reason=length on the rewrite: the original question is searched and the error is recorded."""
    await harness.store.answered(KEY.as_id(), "earlier", "answer")
    harness.engine.rewrites.append(ModelTruncated("length"))
    events = await harness.ask("what about it?")
    assert harness.kb.queries == ["what about it?"]
    done = _final(events)
    assert isinstance(done, Done) and "model_truncated" in done.record.details.rewrite_error


async def test_duplicate_event_key_is_not_answered_twice(harness: Harness) -> None:
    """The same event key a second time yields a duplicate failure and no second answer."""
    first = await harness.ask("问题", event_key="slack:T:C:1")
    second = await harness.ask("问题", event_key="slack:T:C:1")
    assert isinstance(first[-1], Done)
    assert isinstance(second[-1], Failed) and second[-1].code == "duplicate"
    assert len(harness.engine.calls("answer")) == 1


async def test_closing_the_stream_early_marks_the_record_interrupted(harness: Harness) -> None:
    """A consumer that stops listening mid-answer leaves the record interrupted, not pending or answered."""
    harness.kb.add("p1", "内容", document="d")
    harness.engine.answer_delay = 0.05
    harness.engine.answers.append(["a", "b", "c", "d"])
    stream = harness.pipeline.ask(Ask(KEY, "内容?", ConversationScope(("ds",))))
    async for event in stream:
        if isinstance(event, AnswerDelta):
            break
    await stream.aclose()
    await asyncio.sleep(0)
    assert harness.store.records[1].status == RecordStatus.INTERRUPTED


async def test_re_chat_answers_the_same_record_again(harness: Harness) -> None:
    """Asking again resets the record, keeps the old answer in details and answers it anew."""
    first = await harness.ask("问题")
    assert isinstance(first[-1], Done)
    harness.engine.answers.append(["new answer"])
    again = await harness.ask("问题", again=first[-1].record.id)
    done = again[-1]
    assert isinstance(done, Done) and done.record.id == first[-1].record.id
    assert done.record.answer == "new answer\n\n" + done.record.details.notice
    assert [a.answer for a in done.record.details.previous_answers] == [first[-1].record.answer]


async def test_re_chat_answers_the_stored_question_whatever_text_comes_with_it(harness: Harness) -> None:
    """Answering a record again searches and answers its stored question, not the text sent along."""
    first = await harness.ask("年假有几天?")
    assert isinstance(first[-1], Done)
    again = await harness.ask("", again=first[-1].record.id)
    assert isinstance(again[-1], Done)
    assert again[-1].record.question == "年假有几天?"
    assert harness.kb.queries[-1] == "年假有几天?"


async def test_re_chat_of_an_unknown_or_foreign_record_fails_clearly(harness: Harness) -> None:
    """An unknown record id, or one of another conversation, ends with Failed (not_found), not a hang."""
    unknown = await asyncio.wait_for(harness.ask("再答一次", again=999), 5)
    assert isinstance(unknown[-1], Failed) and unknown[-1].code == "not_found"
    other = ConversationKey(source="cli", channel_id="elsewhere")
    record = await stored_question(harness.store, other.as_id(), "别处的问题")
    foreign = await asyncio.wait_for(harness.ask("再答一次", again=record.id), 5)
    assert isinstance(foreign[-1], Failed) and foreign[-1].code == "not_found"
    assert "找不到" in foreign[-1].message and "not found" in foreign[-1].message  # no language known
    assert (await harness.store.get_record(record.id)).status == RecordStatus.PENDING  # type: ignore[union-attr]


async def test_no_datasets_is_a_clear_failure(harness: Harness) -> None:
    """A conversation with no knowledge base gets a clear message and a failed record."""
    events = [e async for e in harness.pipeline.ask(Ask(KEY, "年假?", ConversationScope(())))]
    failed = events[-1]
    assert isinstance(failed, Failed) and failed.code == "no_knowledge_base"
    assert "知识库" in failed.message
    assert not any(isinstance(e, Compacting) for e in events)


async def test_interrupt_pending_marks_crash_leftovers(harness: Harness) -> None:
    """Records left pending by a crash are marked interrupted at start-up."""
    record = await stored_question(harness.store, KEY.as_id(), "left pending", reply_to="C1:123")
    interrupted = await harness.pipeline.interrupt_pending()
    assert [r.id for r in interrupted] == [record.id]
    assert harness.store.records[record.id].status == RecordStatus.INTERRUPTED


class FakeEngineNamed(FakeEngine):
    """A FakeEngine with another name (to tell engines apart)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


async def test_interrupt_pending_leaves_answers_in_progress_alone(harness: Harness) -> None:
    """A pending record whose conversation is locked (being answered elsewhere) is not interrupted."""
    busy = await stored_question(harness.store, KEY.as_id(), "being answered")
    other = KEY.__class__(source="test", channel_id="C2").as_id()
    orphan = await stored_question(harness.store, other, "orphaned")
    async with harness.lock.hold(KEY.as_id()):
        interrupted = await harness.pipeline.interrupt_pending(wait=0.05)
    assert [r.id for r in interrupted] == [orphan.id]
    assert harness.store.records[busy.id].status == RecordStatus.PENDING


async def test_citing_one_of_several_versions_says_which_version_was_cited(harness: Harness) -> None:
    """When the evidence holds two versions of a law, the answer ends with a line naming the cited one."""
    harness.kb.add("new", "申请期限为六十日", document="行政复议法(2023-09-01)")
    harness.kb.add("old", "申请期限为六十日", document="行政复议法(2017-09-01)")
    harness.engine.answers.append(["期限为六十日 [1]"])
    events = await harness.ask("申请期限为几日")
    done = _final(events)
    assert isinstance(done, Done)
    cited = done.record.details.citations[0].document
    other = "2017-09-01" if cited.endswith("(2023-09-01)") else "2023-09-01"
    assert done.record.answer.endswith(f"另有 {other} 版本。")  # type: ignore[union-attr]
    assert "".join(e.text for e in events if isinstance(e, AnswerDelta)) == done.record.answer


async def test_an_answer_quoting_no_paragraph_names_no_version(harness: Harness) -> None:
    """An answer citing nothing (the sources do not say) gets no version line, though the evidence holds two
    versions of a law: it did not cite either, and naming each as "the one cited" contradicted itself."""
    harness.kb.add("new", "申请期限为六十日", document="行政复议法(2023-09-01)")
    harness.kb.add("old", "申请期限为六十日", document="行政复议法(2017-09-01)")
    harness.engine.answers.append(["资料中未找到相关信息。"])
    done = _final(await harness.ask("申请期限为几日"))
    assert isinstance(done, Done)
    assert "版本" not in (done.record.answer or "")


async def test_a_failed_model_rewrite_falls_back_to_the_extractive_rewrite() -> None:
    """The model's rewrite fails: the extractive engine rewrites the follow-up, so its topic is searched."""
    from adapters.extractive import ExtractiveEngine

    harness = build_harness(fallback=ExtractiveEngine())  # type: ignore[arg-type]
    await harness.store.answered(KEY.as_id(), "劳动合同试用期最长多久？", "不得超过六个月。")
    harness.engine.rewrites.append(ModelUnavailable("down"))
    events = await harness.ask("那违反了要赔多少？")
    done = _final(events)
    assert isinstance(done, Done)
    assert harness.kb.queries == ["劳动合同试用期 违反了要赔多少？"]
    assert done.record.details.rewrite_engine == "extractive (fallback)"
    assert "model_unavailable" in done.record.details.rewrite_error


async def test_a_model_rewrite_that_returns_the_follow_up_unchanged_is_rewritten_extractively() -> None:
    """The 0.5B hands '那违反了要赔多少？' back as is: the extractive rewrite adds the topic, and the trace says why."""
    from adapters.extractive import ExtractiveEngine

    harness = build_harness(fallback=ExtractiveEngine())  # type: ignore[arg-type]
    await harness.store.answered(KEY.as_id(), "劳动合同试用期最长多久？", "不得超过六个月。")
    harness.engine.rewrites.append("那违反了要赔多少？")
    done = _final(await harness.ask("那违反了要赔多少？"))
    assert isinstance(done, Done)
    assert harness.kb.queries == ["劳动合同试用期 违反了要赔多少？"]
    assert done.record.details.rewrite_engine == "extractive (fallback)"
    assert done.record.details.rewrite_error.startswith("model_unchanged")


async def test_an_unchanged_standalone_question_stays_as_asked() -> None:
    """A follow-up that needs no topic, returned unchanged by the model, is searched as asked."""
    from adapters.extractive import ExtractiveEngine

    harness = build_harness(fallback=ExtractiveEngine())  # type: ignore[arg-type]
    await harness.store.answered(KEY.as_id(), "劳动合同试用期最长多久？", "不得超过六个月。")
    harness.engine.rewrites.append("行政复议申请期限是多久？")
    done = _final(await harness.ask("行政复议申请期限是多久？"))
    assert isinstance(done, Done)
    assert harness.kb.queries == ["行政复议申请期限是多久？"]

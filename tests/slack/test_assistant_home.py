"""The assistant pane and the App Home tab through the real AsyncApp against the mock Slack Web API."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.slack.inbound.channel_config import ChannelConfig, SuggestedPrompt
from bot.settings import Settings
from tests.slack.block_kit_limits import check_home_view
from tests.slack.harness import NATIVE, FakeCatalogue, SlackHarness, default_settings, document
from tests.slack.real_pipeline import RealPipeline, build_real_pipeline

PANE = "D0PANE"
THREAD = "1300.000100"


def thread_started(user: str = "U1", channel: str = PANE, thread_ts: str = THREAD) -> dict[str, Any]:
    return {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": user,
            "context": {"channel_id": "C1", "team_id": "T1"},
            "channel_id": channel,
            "thread_ts": thread_ts,
        },
        "event_ts": thread_ts,
    }


def pane_message(slack: SlackHarness, text: str, ts: str, user: str = "U1") -> dict[str, Any]:
    return slack.message(text, ts=ts, thread_ts=THREAD, channel=PANE, user=user, channel_type="im")


def home_opened(user: str = "U1", tab: str = "home") -> dict[str, Any]:
    return {"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": tab, "event_ts": "1.1"}


@pytest.fixture
async def pane() -> AsyncIterator[tuple[SlackHarness, RealPipeline]]:
    """A bot on core's real pipeline, streaming natively, with the default catalogue."""
    parts = build_real_pipeline()
    async with SlackHarness.running(pipeline=parts.pipeline, store=parts.store, options=NATIVE) as harness:
        yield harness, parts


async def test_a_pane_thread_gets_prompts_from_its_documents_a_title_and_threaded_answers(
    pane: tuple[SlackHarness, RealPipeline],
) -> None:
    """assistant_thread_started sets prompts from the scope's newest document titles; the first question
    names the thread; both questions are answered in the pane's thread as one conversation with history,
    a trace and the trace action."""
    slack, parts = pane
    assert await slack.event(thread_started()) == 200
    await slack.mock.wait_for(lambda: (PANE, THREAD) in slack.mock.suggested_prompts)
    offered = slack.mock.suggested_prompts[(PANE, THREAD)]
    titles = [prompt["title"] for prompt in offered["prompts"]]
    assert titles == ["About “Rollback runbook”", "About “Deploy guide”"]  # docs only, newest first
    assert offered["prompts"][0]["message"] == "What are the key points of “Rollback runbook”?"
    assert offered["title"] == "Try asking:"
    parts.engine.answers.extend([["Use ", "**make deploy** ", "[1]."], ["Use ", "make rollback ", "[1]."]])
    await slack.event(pane_message(slack, "How do deploys run?", "1300.000200"))
    await slack.bot.wait_idle(10)
    await slack.event(pane_message(slack, "and rollbacks?", "1300.000300"))
    await slack.bot.wait_idle(10)
    first, second = slack.mock.thread(PANE, THREAD)
    assert "make deploy" in first.block_text() and "make rollback" in second.block_text()
    assert first.task_history and "Sources" in second.block_text()
    assert slack.mock.thread_titles == {(PANE, THREAD): "How do deploys run?"}
    assert len(slack.mock.calls_to("assistant.threads.setTitle")) == 1
    [(history, question)] = parts.engine.calls("rewrite")
    assert question == "and rollbacks?" and history[0].question == "How do deploys run?"
    records = sorted(parts.store.records.values(), key=lambda r: r.id)  # type: ignore[attr-defined]
    assert {r.conversation_id for r in records} == {f"slack:T1:{PANE}:{THREAD}"}
    assert all(r.details.trace for r in records)
    await slack.event(
        slack.message("<@UBOT> trace", ts="1300.000400", thread_ts=THREAD, channel=PANE, channel_type="im")
    )
    await slack.mock.wait_for(lambda: bool(slack.mock.ephemerals))
    assert "Retrieval" in json.dumps(slack.mock.ephemerals[-1]["blocks"], ensure_ascii=False)
    compact = slack.message(
        "<@UBOT> compact", ts="1300.000500", thread_ts=THREAD, channel=PANE, channel_type="im"
    )
    await slack.event(compact)
    await slack.mock.wait_for(lambda: len(slack.mock.ephemerals) == 2)
    assert "compact" in slack.mock.ephemerals[-1]["text"].lower()  # compaction runs on the pane's thread too


async def test_configured_prompts_win_over_document_titles() -> None:
    """A channel's suggested_prompts in KB_CONFIG (tables or plain strings) are offered as they are."""
    settings = default_settings()
    settings.channels[PANE] = ChannelConfig(
        datasets=["laws"],
        suggested_prompts=[SuggestedPrompt(title="复议期限", message="行政复议的申请期限是多久?")],
    )
    slack = await SlackHarness(settings=settings).start()
    try:
        await slack.event(thread_started())
        await slack.mock.wait_for(lambda: (PANE, THREAD) in slack.mock.suggested_prompts)
        offered = slack.mock.suggested_prompts[(PANE, THREAD)]
        assert offered["prompts"] == [{"title": "复议期限", "message": "行政复议的申请期限是多久?"}]
        assert offered["title"] == "可以这样问:"
        assert ChannelConfig(suggested_prompts=["Holidays?"]).suggested_prompts == [  # type: ignore[list-item]
            SuggestedPrompt(title="Holidays?", message="Holidays?")
        ]
    finally:
        await slack.close()
        await slack.mock.close()
    assert slack.mock.violations == []


async def test_a_pane_with_no_documents_offers_no_prompts(slack: SlackHarness) -> None:
    """An empty knowledge base makes no setSuggestedPrompts call (Slack refuses an empty list)."""
    slack.bot.pane.catalogue.source = FakeCatalogue({})
    await slack.event(thread_started(thread_ts="1300.000900"))
    await slack.bot.wait_idle(5)
    assert not slack.mock.calls_to("assistant.threads.setSuggestedPrompts")


async def test_the_home_tab_shows_datasets_scopes_help_and_the_last_five_questions(
    slack: SlackHarness,
) -> None:
    """app_home_opened publishes a valid Home view: datasets with document counts and last ingest, each
    configured channel's scope, how to ask, the thread actions, and the person's five latest questions
    linked to their messages (others' questions are not shown)."""
    for index in range(6):
        await slack.event(slack.mention(f"question number {index}?", ts=f"1301.00000{index}"))
    await slack.event(slack.mention("someone else's question?", ts="1301.000009", user="U2"))
    await slack.bot.wait_idle(5)
    assert await slack.event(home_opened()) == 200
    await slack.mock.wait_for(lambda: "U1" in slack.mock.home_views)
    view = slack.mock.home_views["U1"]
    assert check_home_view(view) == [] and view["type"] == "home"
    text = json.dumps(view["blocks"], ensure_ascii=False)
    assert "*docs* — 2 document(s), last ingested <!date^1790000000^" in text
    assert "*laws* — 1 document(s)" in text
    assert "<#C1>: docs" in text and "<#CQUIET>: docs (mentions only)" in text
    assert "<#CNONE>: none (I don't answer there)" in text and "Other channels and DMs: docs" in text
    assert "Reply in the same thread to follow up" in text and "@kb compact" in text
    assert "Show retrieval trace" in text
    for index in range(1, 6):
        assert f"|question number {index}?>" in text
    assert "question number 0?" not in text and "someone else" not in text
    assert "https://test.slack.com/archives/C1/p1301000005" in text
    assert text.index("question number 5") < text.index("question number 1")


async def test_admins_see_the_top_gaps_on_the_home_tab_and_members_do_not(slack: SlackHarness) -> None:
    """Two questions about stock options that ended with a notice are one gap on a workspace admin's Home
    tab (count, the newest example, what was judged missing), a supported answer is none; a member who
    opens the tab sees no gaps section (users.info says who is an admin)."""
    missing = "缺少关于「股票期权」的资料"
    for question in ("员工股票期权怎么行权?", "股票期权的行权流程是什么?"):
        slack.pipeline.script(question, notice=f"注意:{missing}", rounds=[("期权", False, missing)])
    for number, question in enumerate(("员工股票期权怎么行权?", "股票期权的行权流程是什么?", "年假有几天?")):
        await slack.event(slack.mention(question, ts=f"1302.00000{number}"))
    await slack.bot.wait_idle(5)
    slack.mock.admins.add("UADMIN")
    await slack.event(home_opened(user="UADMIN"))
    await slack.event(home_opened(user="U1"))
    await slack.mock.wait_for(lambda: {"UADMIN", "U1"} <= set(slack.mock.home_views))
    admin = slack.mock.home_views["UADMIN"]
    assert check_home_view(admin) == []
    text = json.dumps(admin["blocks"], ensure_ascii=False)
    assert "What the knowledge base is missing" in text
    assert "*2×* 股票期权的行权流程是什么?" in text and f"missing: {missing}" in text
    assert "年假" not in text.split("What the knowledge base is missing")[1].split("Which channels")[0]
    member = json.dumps(slack.mock.home_views["U1"]["blocks"], ensure_ascii=False)
    assert "What the knowledge base is missing" not in member


async def test_the_home_tab_stays_within_block_kit_limits_for_a_large_workspace() -> None:
    """1,500 datasets and 2,000 configured channels still give a valid view (≤ 100 blocks, sections ≤ 3,000
    characters), saying how many lines were left out; the Messages tab publishes nothing."""
    documents = {
        f"dataset-{index:04d}-" + "x" * 40: [document("d", f"Doc {index}", at=1_790_000_000.0 + index)]
        for index in range(1500)
    }
    settings = Settings(
        channels={
            **{
                f"C{index:08d}": ChannelConfig(datasets=[f"dataset-{index:04d}-" + "x" * 40])
                for index in range(2000)
            },
            "default": ChannelConfig(datasets=None),
        }
    )
    slack = await SlackHarness(settings=settings, catalogue=FakeCatalogue(documents)).start()
    try:
        await slack.event(home_opened(tab="messages"))
        await slack.event(home_opened(user="U7"))
        await slack.mock.wait_for(lambda: "U7" in slack.mock.home_views)
        view = slack.mock.home_views["U7"]
        assert check_home_view(view) == [] and len(view["blocks"]) <= 100
        text = json.dumps(view["blocks"])
        assert text.count("more") == 2  # both long lists say how many lines were left out
        assert "Other channels and DMs: every dataset" in text  # the default scope is never cut
        assert "You haven't asked anything yet." in text
        assert list(slack.mock.home_views) == ["U7"]
    finally:
        await slack.close()
        await slack.mock.close()
    assert slack.mock.violations == []

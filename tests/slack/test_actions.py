"""Thread actions: shortcuts, `@bot compact|trace`, answer buttons, feedback, and the `/kb` command."""

from __future__ import annotations

import json

from core.models import RecordStatus
from tests.slack.harness import SlackHarness

ROOT = "1200.000100"


async def _answered_thread(slack: SlackHarness, *questions: str) -> None:
    """Ask each question in the thread rooted at ROOT in C1 and wait for the answers."""
    for index, question in enumerate(questions):
        ts = ROOT if index == 0 else f"1200.00{index + 1:02d}00"
        event = slack.mention(question, ts=ts, thread_ts=None if index == 0 else ROOT)
        await slack.event(event)
        await slack.bot.wait_idle(5)


async def test_the_compact_shortcut_on_a_thread_reply_compacts_that_thread(slack: SlackHarness) -> None:
    """ "Compact this thread" on a reply uses its thread_ts and reports the result ephemerally in the thread."""
    await _answered_thread(slack, "one?", "two?")
    reply = {"ts": "1200.000200", "thread_ts": ROOT, "text": "two?", "user": "U1"}
    assert await slack.shortcut("compact_thread", channel="C1", message=reply) == 200
    await slack.bot.wait_idle(5)
    await slack.mock.wait_for(lambda: len(slack.mock.ephemerals) == 1)
    [note] = slack.mock.ephemerals
    assert note["thread_ts"] == ROOT and note["user"] == "U1"
    assert "Compacted 1 turn(s) into the summary (revision 1)" in note["text"]
    assert slack.pipeline.compactions == [f"slack:T1:C1:{ROOT}"]


async def test_compacting_a_thread_without_answers_says_there_is_nothing_to_compact(
    slack: SlackHarness,
) -> None:
    """The shortcut on a thread the bot never answered in reports "nothing to compact"."""
    await slack.shortcut(
        "compact_thread", channel="C1", message={"ts": "1200.009900", "text": "hi", "user": "U1"}
    )
    await slack.mock.wait_for(lambda: len(slack.mock.ephemerals) == 1)
    assert "no answered questions yet" in slack.mock.ephemerals[0]["text"]


async def test_the_trace_shortcut_opens_the_modal_for_the_threads_latest_answer(slack: SlackHarness) -> None:
    """ "Show retrieval trace" opens a modal with the latest answer's rounds, queries, gap and stop reason."""
    slack.pipeline.script(
        "deploy?", rounds=[("deploy steps", False, "the rollback plan"), ("rollback plan", True, "")]
    )
    await _answered_thread(slack, "first?", "deploy?")
    await slack.shortcut("show_trace", channel="C1", message={"ts": ROOT, "text": "first?", "user": "U1"})
    await slack.mock.wait_for(lambda: len(slack.mock.views) == 1)
    [view] = slack.mock.views.values()
    text = json.dumps(view["blocks"], ensure_ascii=False)
    assert view["title"]["text"] == "Retrieval trace"
    assert "deploy steps" in text and "rollback plan" in text and "Round 2" in text
    assert "Gap: the rollback plan" in text and "Stop reason" in text
    assert json.loads(view["private_metadata"])["page"] == 0


async def test_typing_compact_and_trace_in_a_thread_does_the_same(slack: SlackHarness) -> None:
    """`@bot compact` and `@bot trace` in a thread reply privately instead of being asked as questions."""
    await _answered_thread(slack, "one?", "two?")
    await slack.event(slack.mention("compact", ts="1200.000500", thread_ts=ROOT))
    await slack.event(slack.mention("trace", ts="1200.000600", thread_ts=ROOT))
    await slack.bot.wait_idle(5)
    assert [q.text for q in slack.pipeline.asked] == ["one?", "two?"]
    compacted, trace = slack.mock.ephemerals
    assert "Compacted 1 turn(s)" in compacted["text"]
    assert trace["blocks"][-1]["elements"][0]["action_id"] == "kb_show_trace"


async def test_the_show_trace_button_opens_the_modal_and_pages_turn_with_views_update(
    slack: SlackHarness,
) -> None:
    """A trace longer than one modal is paginated; "next page" updates the open view in place."""
    rounds = [(f"query number {i}", False, f"gap {i}") for i in range(70)]
    slack.pipeline.script("deep?", rounds=rounds)
    await _answered_thread(slack, "deep?")
    record = next(iter(slack.pipeline.store.records.values()))
    await slack.action("kb_show_trace", str(record.id), message_ts="1800000000.000001", thread_ts=ROOT)
    await slack.mock.wait_for(lambda: len(slack.mock.views) == 1)
    [view] = slack.mock.views.values()
    assert len(view["blocks"]) <= 100
    nav = view["blocks"][-1]
    assert [e["action_id"] for e in nav["elements"]] == ["kb_trace_page_next"]
    await slack.action("kb_trace_page_next", nav["elements"][0]["value"], view=view)
    await slack.mock.wait_for(
        lambda: json.loads(slack.mock.views[view["id"]]["private_metadata"])["page"] == 1
    )
    second = slack.mock.views[view["id"]]
    assert "query number 69" in json.dumps(second["blocks"]) and "query number 69" not in json.dumps(
        view["blocks"]
    )
    assert [e["action_id"] for e in second["blocks"][-1]["elements"]] == ["kb_trace_page_prev"]


async def test_feedback_buttons_are_stored_on_the_record(slack: SlackHarness) -> None:
    """Clicks on Slack's feedback_buttons element (the value names verdict and record) are saved per user in
    the record's details and acknowledged privately; a later click by the same user replaces theirs."""
    await _answered_thread(slack, "rate me?")
    record = next(iter(slack.pipeline.store.records.values()))
    [reply] = slack.mock.thread("C1", ROOT)
    feedback_block = next(b for b in reply.blocks if b["type"] == "context_actions")
    element = feedback_block["elements"][0]
    up, down = element["positive_button"]["value"], element["negative_button"]["value"]
    click = {"message_ts": reply.ts, "thread_ts": ROOT, "kind": "feedback_buttons"}
    await slack.action(element["action_id"], up, user="U1", block_id=feedback_block["block_id"], **click)
    await slack.action(element["action_id"], up, user="U2", block_id=feedback_block["block_id"], **click)
    await slack.action(element["action_id"], down, user="U2", block_id=feedback_block["block_id"], **click)
    await slack.action(element["action_id"], "sideways:1", user="U3", **click)  # not ours: ignored
    await slack.mock.wait_for(lambda: len(slack.mock.ephemerals) == 3)
    feedback = slack.pipeline.store.records[record.id].details.feedback
    assert {entry.person: entry.value for entry in feedback} == {"U1": "up", "U2": "down"}
    assert slack.pipeline.store.records[record.id].status == RecordStatus.ANSWERED
    assert "Thanks for the feedback" in slack.mock.ephemerals[0]["text"]


async def test_the_plain_feedback_buttons_of_older_answers_still_count(slack: SlackHarness) -> None:
    """Answers posted before feedback_buttons carry kb_feedback_up/down buttons: their clicks are stored too."""
    await _answered_thread(slack, "rate me too?")
    record = next(iter(slack.pipeline.store.records.values()))
    await slack.action("kb_feedback_up", str(record.id), message_ts="x", thread_ts=ROOT, user="U1")
    await slack.action("kb_feedback_down", str(record.id), message_ts="x", thread_ts=ROOT, user="U2")
    await slack.mock.wait_for(lambda: len(slack.mock.ephemerals) == 2)
    feedback = slack.pipeline.store.records[record.id].details.feedback
    assert {entry.person: entry.value for entry in feedback} == {"U1": "up", "U2": "down"}


async def test_kb_help_and_settings_reply_privately(slack: SlackHarness) -> None:
    """`/kb` shows help and `/kb settings` shows the channel's datasets and modes, ephemerally."""
    await slack.command("")
    await slack.command("settings", channel="CQUIET")
    await slack.mock.wait_for(lambda: len(slack.mock.responses) == 2)
    help_reply, settings_reply = slack.mock.responses
    assert help_reply["response_type"] == "ephemeral" and "/kb trace" in json.dumps(help_reply["blocks"])
    assert "Knowledge bases: docs" in settings_reply["text"] and "mention only: yes" in settings_reply["text"]


async def test_a_permalink_into_a_channel_the_user_is_not_in_is_refused(slack: SlackHarness) -> None:
    """`/kb trace <permalink>` is refused when the requester is not a member of the linked channel."""
    await _answered_thread(slack, "secret?")
    slack.mock.add_channel("C1", members=["U1", "U2", "U3", "U4", "U5"])
    await slack.command(f"trace https://test.slack.com/archives/C1/p{ROOT.replace('.', '')}", user="U9")
    await slack.command(f"compact <https://test.slack.com/archives/C1/p{ROOT.replace('.', '')}>", user="U9")
    await slack.mock.wait_for(lambda: len(slack.mock.responses) == 2)
    assert all("Refused" in reply["text"] for reply in slack.mock.responses)
    assert slack.mock.views == {} and slack.pipeline.compactions == []


async def test_a_permalink_works_for_a_member_found_on_a_later_page(slack: SlackHarness) -> None:
    """A member listed on the third page of conversations.members gets the trace modal of that thread."""
    await _answered_thread(slack, "open?")
    slack.mock.add_channel("C1", members=["U1", "U2", "U3", "U4", "U5"])
    link = f"https://test.slack.com/archives/C1/p1200000500?thread_ts={ROOT}&cid=C1"
    await slack.command(f"trace {link}", user="U5")
    await slack.mock.wait_for(lambda: len(slack.mock.views) == 1)
    assert len(slack.mock.calls_to("conversations.members")) == 3


async def test_a_permalink_into_someone_elses_dm_is_refused(slack: SlackHarness) -> None:
    """A DM between the bot and another person is visible only to that person."""
    slack.mock.add_channel("D7", members=["U7", "UBOT"], is_im=True, user="U7")
    await slack.command("compact https://test.slack.com/archives/D7/p1200000100", user="U1")
    await slack.mock.wait_for(lambda: len(slack.mock.responses) == 1)
    assert "Refused" in slack.mock.responses[0]["text"]


async def test_a_command_without_a_permalink_explains_what_is_needed(slack: SlackHarness) -> None:
    """`/kb trace` with no link asks for a message link."""
    await slack.command("trace")
    await slack.mock.wait_for(lambda: len(slack.mock.responses) == 1)
    assert "link to a message" in slack.mock.responses[0]["text"]

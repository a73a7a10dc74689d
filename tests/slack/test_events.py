"""Events over HTTP: signatures, url_verification, retries, double delivery, follow-ups, DMs, ignored events."""

from __future__ import annotations

import json
import time

from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import SlackHarness


async def test_url_verification_echoes_the_challenge(slack: SlackHarness) -> None:
    """Slack's url_verification handshake gets its challenge back."""
    status, body = await slack.post(
        json.dumps({"token": "x", "challenge": "abc123", "type": "url_verification"})
    )
    assert status == 200 and json.loads(body) == {"challenge": "abc123"}


async def test_a_bad_signature_and_a_stale_timestamp_are_rejected_with_401(slack: SlackHarness) -> None:
    """Requests signed with another secret, or older than five minutes, never reach a listener."""
    body = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T1",
            "event_id": "Ev1",
            "event": slack.mention("hi", ts="1100.000100"),
        }
    )
    assert (await slack.post(body, secret="wrong-secret"))[0] == 401
    assert (await slack.post(body, timestamp=int(time.time()) - 301))[0] == 401
    await slack.bot.wait_idle(2)
    assert slack.pipeline.asked == [] and slack.mock.calls_to("chat.postMessage") == []


async def test_a_slack_retry_of_the_same_event_is_acked_and_not_answered_again(slack: SlackHarness) -> None:
    """A redelivery with X-Slack-Retry-Num and the same event_id gets 200 and no second answer."""
    event = slack.mention("retry me", ts="1100.000200")
    assert await slack.event(event, event_id="EvSAME") == 200
    assert await slack.event(event, event_id="EvSAME", retry_num=1) == 200
    await slack.bot.wait_idle(5)
    assert len(slack.pipeline.asked) == 1
    assert len(slack.mock.thread("C1", "1100.000200")) == 1


async def test_app_mention_and_message_deliveries_of_one_message_give_one_answer(slack: SlackHarness) -> None:
    """The app_mention and message.channels events of one message (different event ids) answer once."""
    mention = slack.mention("double?", ts="1100.000300")
    message = slack.message("<@UBOT> double?", ts="1100.000300")
    await slack.event(message)
    await slack.event(mention)
    await slack.bot.wait_idle(5)
    assert len(slack.pipeline.asked) == 1
    assert len(slack.mock.thread("C1", "1100.000300")) == 1


async def test_a_restart_does_not_answer_a_message_twice(slack: SlackHarness) -> None:
    """After a restart (fresh memory, same store), a redelivered message is recognised by its event key."""
    await slack.event(slack.mention("once?", ts="1100.000400"))
    await slack.bot.wait_idle(5)
    restarted = await SlackHarness(pipeline=FakePipeline(slack.pipeline.store), mock=slack.mock).start()
    try:
        await restarted.event(restarted.mention("once?", ts="1100.000400"), retry_num=2)
        await restarted.bot.wait_idle(5)
    finally:
        await restarted.close()
    [reply] = slack.mock.thread("C1", "1100.000400")
    assert "The answer is in the guide" in reply.block_text()
    assert len(slack.pipeline.store.records) == 1


async def test_a_follow_up_without_mention_in_an_answered_thread_is_answered(slack: SlackHarness) -> None:
    """Once the bot answered in a thread, a plain reply there is a follow-up in the same conversation."""
    await slack.event(slack.mention("first?", ts="1100.000500"))
    await slack.bot.wait_idle(5)
    await slack.event(slack.message("and then?", ts="1100.000600", thread_ts="1100.000500"))
    await slack.bot.wait_idle(5)
    assert [q.text for q in slack.pipeline.asked] == ["first?", "and then?"]
    assert slack.pipeline.asked[0].conversation == slack.pipeline.asked[1].conversation
    assert len(slack.mock.thread("C1", "1100.000500")) == 2


async def test_plain_messages_elsewhere_and_in_mention_only_channels_are_not_answered(
    slack: SlackHarness,
) -> None:
    """Top-level chatter, replies in threads the bot never joined, and mention-only follow-ups are ignored."""
    await slack.event(slack.message("just chatting", ts="1100.000700"))
    await slack.event(slack.message("a reply", ts="1100.000800", thread_ts="1100.000790"))
    await slack.event(slack.mention("quiet?", ts="1100.000900", channel="CQUIET"))
    await slack.bot.wait_idle(5)
    await slack.event(slack.message("follow-up", ts="1100.001000", thread_ts="1100.000900", channel="CQUIET"))
    await slack.bot.wait_idle(5)
    assert [q.text for q in slack.pipeline.asked] == ["quiet?"]


async def test_a_direct_message_is_answered_in_its_thread(slack: SlackHarness) -> None:
    """A DM needs no mention; the answer goes in the message's thread."""
    await slack.event(slack.message("hello from a DM", ts="1100.001100", channel="D1", channel_type="im"))
    await slack.bot.wait_idle(5)
    assert [q.text for q in slack.pipeline.asked] == ["hello from a DM"]
    assert len(slack.mock.thread("D1", "1100.001100")) == 1


async def test_bots_edits_deletions_and_joins_are_ignored(slack: SlackHarness) -> None:
    """The bot's own messages, other bots, edits, deletions and joins are acked and never answered."""
    events = [
        slack.message("me", ts="1100.001200", user="UBOT", bot_id="BBOT"),
        slack.message("<@UBOT> other bot", ts="1100.001300", user="U9", bot_id="B999"),
        slack.message(
            "",
            ts="1100.001400",
            subtype="message_changed",
            message={"user": "U1", "text": "<@UBOT> edited", "ts": "1100.000100"},
        ),
        slack.message("", ts="1100.001500", subtype="message_deleted", deleted_ts="1100.000100"),
        slack.message("<@U1> has joined", ts="1100.001600", subtype="channel_join"),
    ]
    statuses = [await slack.event(event) for event in events]
    await slack.bot.wait_idle(5)
    assert statuses == [200] * len(events)
    assert slack.pipeline.asked == []
    assert slack.mock.calls_to("chat.postMessage") == []


async def test_slack_markup_becomes_plain_text_before_retrieval(slack: SlackHarness) -> None:
    """Mentions, channel links, labelled links and entities reach the pipeline as plain text."""
    slack.mock.user_names["U2"] = "alice"
    text = "ask <@U2> about <#C9|deploys> &amp; <https://wiki.example.com/x|the wiki> &lt;now&gt;"
    await slack.event(slack.mention(text, ts="1100.001700"))
    await slack.bot.wait_idle(5)
    assert (
        slack.pipeline.asked[0].text
        == "ask @alice about #deploys & the wiki (https://wiki.example.com/x) <now>"
    )


async def test_setstatus_failing_outside_assistant_threads_does_not_stop_the_answer(
    slack: SlackHarness,
) -> None:
    """assistant.threads.setStatus errors are tolerated; the answer is still delivered."""
    slack.mock.failing["assistant.threads.setStatus"] = "not_allowed_token_type"
    await slack.event(slack.mention("status?", ts="1100.001800"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1100.001800")
    assert "The answer is in the guide" in reply.block_text()


async def test_the_health_endpoint_reports_ready(slack: SlackHarness) -> None:
    """GET /healthz answers 200 with ok once the bot has started."""
    async with slack.session.get(slack.server.make_url("/healthz")) as response:
        assert response.status == 200
        assert (await response.json())["ok"] is True

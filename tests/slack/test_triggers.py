"""Which message events the bot answers, treats as thread commands, or ignores (pure decisions)."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.slack.inbound.triggers import parse_message_event, should_answer, thread_command


def _event(**fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "user": "U1",
        "ts": "5.000001",
        "channel": "C1",
        "text": "hi",
        "channel_type": "channel",
        **fields,
    }


@pytest.mark.parametrize(
    "fields",
    [
        {"subtype": "message_changed"},
        {"subtype": "message_deleted"},
        {"subtype": "channel_join"},
        {"subtype": "bot_message", "bot_id": "B2"},
        {"bot_id": "B2"},
        {"user": "UBOT"},
        {"user": "USLACKBOT"},
        {"hidden": True},
        {"user": ""},
    ],
)
def test_events_the_bot_must_ignore(fields: dict[str, Any]) -> None:
    """Edits, deletions, joins, bots, itself, Slackbot and hidden events are not messages to answer."""
    assert parse_message_event(_event(**fields), team_id="T1", bot_user_id="UBOT") is None


def test_a_thread_reply_keys_the_conversation_by_its_thread_root() -> None:
    """The conversation key is team + channel + thread_ts; the event key is the message's own ts."""
    message = parse_message_event(
        _event(thread_ts="4.000001", subtype="thread_broadcast"), team_id="T1", bot_user_id="UBOT"
    )
    assert message is not None
    assert message.key.as_id() == "slack:T1:C1:4.000001"
    assert message.event_key == "slack:T1:C1:5.000001"
    assert message.in_thread and not message.mentions_bot and not message.is_dm


@pytest.mark.parametrize(
    ("fields", "engaged", "mention_only", "answer"),
    [
        ({"text": "<@UBOT> hi"}, False, True, True),
        ({"channel": "D1", "channel_type": "im"}, False, True, True),
        ({"thread_ts": "4.000001"}, True, False, True),
        ({"thread_ts": "4.000001"}, True, True, False),
        ({"thread_ts": "4.000001"}, False, False, False),
        ({}, True, False, False),
    ],
)
def test_when_the_bot_answers(
    fields: dict[str, Any], engaged: bool, mention_only: bool, answer: bool
) -> None:
    """Mentions and DMs always; thread replies only where the bot answered, unless mention-only."""
    message = parse_message_event(_event(**fields), team_id="T1", bot_user_id="UBOT")
    assert message is not None
    assert should_answer(message, thread_engaged=engaged, mention_only=mention_only) is answer


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("<@UBOT> compact", "compact"),
        ("<@UBOT>  Trace.", "trace"),
        ("<@UBOT> 压缩", "compact"),
        ("<@UBOT> compact the budget section", None),
        ("<@UBOT> what is a trace?", None),
    ],
)
def test_thread_commands_are_the_whole_message(text: str, command: str | None) -> None:
    """Only a bare "compact"/"trace" (or its Chinese form) after the mention is a command."""
    event = {"type": "app_mention", "user": "U1", "channel": "C1", "ts": "1.0", "text": text}
    message = parse_message_event(event, team_id="T1", bot_user_id="UBOT")
    assert message is not None and thread_command(message) == command

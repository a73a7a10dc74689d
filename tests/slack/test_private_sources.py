"""A private channel's synced threads (a slack-channel source with private=true) are searched only in that
channel or in a DM of one of its members: the question's scope and the assistant pane's prompts leave the
dataset out everywhere else."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from adapters.slack.inbound.private_scopes import visible
from bot.settings import Settings
from core.sources.models import SourceSpec, SourceState
from tests.slack.harness import FakeCatalogue, SlackHarness, default_documents, document
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.test_assistant_home import thread_started

PRIVATE = SourceState(SourceSpec("hr", "slack-channel", "hr", {"channel": "G300", "private": "true"}))
SALARY = "#hr-private: The salary review is in March"


async def _sources() -> Sequence[SourceState]:
    return [PRIVATE, SourceState(SourceSpec("it", "slack-channel", "docs", {"channel": "C1"}))]


async def _datasets() -> list[str]:
    return ["docs", "hr"]


@pytest.fixture
async def slack() -> AsyncIterator[SlackHarness]:
    """A bot with no channel scopes (every channel searches every dataset) whose knowledge holds the public
    "docs" and the private channel G300's "hr" (members U1 and U3, listed a page at a time)."""
    documents = {**default_documents(), "hr": [document("hr", SALARY, at=1_800_000_000.0)]}
    mock = MockSlackApi()
    mock.add_channel("G300", members=["U1", "U3"], name="hr-private", is_private=True)
    mock.members_page_size = 1
    async with SlackHarness.running(
        all_datasets=_datasets,
        catalogue=FakeCatalogue(documents),
        sources=_sources,
        mock=mock,
        settings=Settings(),
    ) as running:
        yield running


async def _scope_of(slack: SlackHarness, event: dict[str, object]) -> tuple[str, ...]:
    before = set(slack.pipeline.scopes)
    assert await slack.event(event) == 200
    await slack.mock.wait_for(lambda: set(slack.pipeline.scopes) - before)
    [record_id] = set(slack.pipeline.scopes) - before
    return tuple(slack.pipeline.scopes[record_id])


def test_a_private_dataset_is_visible_in_its_channel_and_to_its_members_only() -> None:
    """The pure rule: public datasets everywhere; a private one in its channel, or for a member."""
    private = {"hr": "G300"}
    assert visible(["docs", "hr"], private, channel_id="C1", member_of=frozenset()) == ("docs",)
    assert visible(["docs", "hr"], private, channel_id="G300", member_of=frozenset()) == ("docs", "hr")
    assert visible(["docs", "hr"], private, channel_id="D1", member_of=frozenset({"G300"})) == ("docs", "hr")


async def test_a_question_elsewhere_cannot_search_the_private_channels_threads(slack: SlackHarness) -> None:
    """Asked in another channel, or in a DM by someone outside the channel: without "hr". Asked in the
    channel itself, or in a DM by a member: with it."""
    elsewhere = await _scope_of(slack, slack.mention("when is the salary review?", ts="1.000100", user="U1"))
    inside = await _scope_of(
        slack, slack.mention("when is the salary review?", ts="2.000100", channel="G300")
    )
    member_dm = slack.message(
        "when is the salary review?", ts="3.000100", channel="D1", user="U3", channel_type="im"
    )
    outsider_dm = slack.message(
        "when is the salary review?", ts="4.000100", channel="D2", user="U2", channel_type="im"
    )
    assert elsewhere == ("docs",) and inside == ("docs", "hr")
    assert await _scope_of(slack, member_dm) == ("docs", "hr")
    assert await _scope_of(slack, outsider_dm) == ("docs",)


async def test_the_pane_never_suggests_a_private_channels_thread_to_someone_outside_it(
    slack: SlackHarness,
) -> None:
    """Suggested prompts come from document titles: the private thread's title only for a member."""
    assert await slack.event(thread_started(user="U2", channel="D0OUT", thread_ts="10.1")) == 200
    await slack.mock.wait_for(lambda: ("D0OUT", "10.1") in slack.mock.suggested_prompts)
    outsider = [p["title"] for p in slack.mock.suggested_prompts[("D0OUT", "10.1")]["prompts"]]
    assert await slack.event(thread_started(user="U1", channel="D0IN", thread_ts="11.1")) == 200
    await slack.mock.wait_for(lambda: ("D0IN", "11.1") in slack.mock.suggested_prompts)
    member = [p["title"] for p in slack.mock.suggested_prompts[("D0IN", "11.1")]["prompts"]]
    assert not any("salary" in title for title in outsider)
    assert any("salary" in title for title in member)

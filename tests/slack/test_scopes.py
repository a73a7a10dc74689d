"""Channel scopes in Slack: unconfigured channels search every dataset; a default with none locks them out."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.slack.inbound.channel_config import ChannelConfig
from bot.settings import Settings
from tests.slack.harness import SlackHarness


async def _every_dataset() -> Sequence[str]:
    return ["handbook", "ops"]


async def test_with_no_configuration_a_mention_searches_every_dataset() -> None:
    """No KB_CONFIG, no KB_DATASETS: the question goes to the pipeline with all the knowledge base's datasets."""
    harness = await SlackHarness(settings=Settings(), all_datasets=_every_dataset).start()
    try:
        await harness.event(harness.mention("anything?", ts="7000.000100", channel="CANY"))
        await harness.bot.wait_idle(5)
        [reply] = harness.mock.thread("CANY", "7000.000100")
        assert "The answer is in the guide" in reply.block_text()
        assert harness.pipeline.asked[0].scope.datasets == ("handbook", "ops")
    finally:
        await harness.close()
        await harness.mock.close()


async def test_a_default_entry_without_datasets_locks_unlisted_channels_out() -> None:
    """`[channels.default] datasets = []`: an unlisted channel is told no knowledge base is configured there,
    a listed one is answered, and the pipeline never sees the locked-out question."""
    settings = Settings(
        channels={"default": ChannelConfig(datasets=[]), "COPEN": ChannelConfig(datasets=["handbook"])}
    )
    harness = await SlackHarness(settings=settings, all_datasets=_every_dataset).start()
    try:
        await harness.event(harness.mention("locked?", ts="7000.000200", channel="CLOCKED"))
        await harness.event(harness.mention("open?", ts="7000.000300", channel="COPEN"))
        await harness.bot.wait_idle(5)
        [locked] = harness.mock.thread("CLOCKED", "7000.000200")
        assert "No knowledge base is configured here" in locked.block_text()
        assert [q.scope.datasets for q in harness.pipeline.asked] == [("handbook",)]
    finally:
        await harness.close()
        await harness.mock.close()

"""The knowledge base as the Slack surfaces see it: summaries, titles, the cache, and a failing source."""

from __future__ import annotations

from adapters.slack.inbound.channel_config import ChannelConfig, SuggestedPrompt
from adapters.slack.surfaces.catalogue import Catalogue
from adapters.slack.surfaces.suggested_prompts import suggested_prompts
from core.errors import KbError
from core.messages import phrase
from tests.slack.harness import FakeCatalogue


class _Failing(FakeCatalogue):
    async def list_datasets(self) -> list[str]:
        raise KbError(phrase("error.knowledge_store_failed"))


async def test_summaries_count_enabled_documents_and_keep_the_newest_titles_first() -> None:
    """A disabled document is not counted; last ingest is the newest enabled version; titles newest first."""
    clock = [100.0]
    source = FakeCatalogue()
    catalogue = Catalogue(source, clock=lambda: clock[0])
    docs, laws = await catalogue.summaries()
    assert (docs.name, docs.documents, docs.chunks, docs.last_ingest) == ("docs", 2, 6, 1_790_000_000.0)
    assert docs.titles == ("Rollback runbook", "Deploy guide") and laws.titles == ("行政复议法",)
    assert [s.name for s in await catalogue.scope(["laws", "missing", "docs"])] == ["laws", "docs"]
    assert source.listed == 1  # cached
    clock[0] += 31
    await catalogue.summaries()
    assert source.listed == 2


async def test_a_failing_knowledge_base_reads_as_the_last_known_summaries() -> None:
    """A KbError from the source is logged; the surfaces show what was known (nothing at first)."""
    assert await Catalogue(_Failing()).summaries() == []
    assert await Catalogue(None).summaries() == []


async def test_prompts_take_turns_across_datasets_and_follow_each_titles_language() -> None:
    """Default prompts alternate between the scope's datasets, at most four, in the title's language."""
    scope = await Catalogue(FakeCatalogue()).scope(None)
    prompts = suggested_prompts(ChannelConfig(), scope)
    assert [p["title"] for p in prompts] == [
        "About “Rollback runbook”",
        "《行政复议法》讲了什么",
        "About “Deploy guide”",
    ]
    assert prompts[1]["message"] == "《行政复议法》主要讲了什么?请列出要点。"
    many = [SuggestedPrompt(title=f"t{i}", message=f"m{i}") for i in range(6)]
    assert len(suggested_prompts(ChannelConfig(suggested_prompts=many), scope)) == 4

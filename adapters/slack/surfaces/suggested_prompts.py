"""The assistant pane's suggested prompts: the channel's own, else questions about its newest documents
(pure)."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.rendering.blocks import clip
from adapters.slack.rendering.texts import t
from adapters.slack.surfaces.catalogue import DatasetSummary
from core.text import detect_language

MAX_PROMPTS = 4  # Slack shows at most four
PROMPT_TITLE_MAX = 75
PROMPT_MESSAGE_MAX = 300


def suggested_prompts(
    config: ChannelConfig, scope: Sequence[DatasetSummary], *, lang: str = "en"
) -> list[dict[str, str]]:
    """At most four {title, message} prompts: the configured ones, else one per recent document title,
    taken in turn from each dataset the channel searches, worded in the title's language."""
    if config.suggested_prompts is not None:
        chosen = [(p.title.strip(), p.message.strip()) for p in config.suggested_prompts]
        return [
            {"title": clip(title, PROMPT_TITLE_MAX), "message": clip(message, PROMPT_MESSAGE_MAX)}
            for title, message in chosen
            if title and message
        ][:MAX_PROMPTS]
    titles: list[str] = []
    depth = max((len(summary.titles) for summary in scope), default=0)
    for index in range(depth):  # round robin, so one big dataset does not take every prompt
        for summary in scope:
            if index < len(summary.titles) and summary.titles[index] not in titles:
                titles.append(summary.titles[index])
    prompts = []
    for title in titles[:MAX_PROMPTS]:
        wording = detect_language(title) if title else lang
        prompts.append(
            {
                "title": clip(t("prompt_title", wording, title=title), PROMPT_TITLE_MAX),
                "message": clip(t("prompt_message", wording, title=title), PROMPT_MESSAGE_MAX),
            }
        )
    return prompts

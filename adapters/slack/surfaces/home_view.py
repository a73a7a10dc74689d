"""The App Home tab: what the bot can answer, the synced sources' last syncs, for workspace admins the top
gaps (what the knowledge base is missing), which channels search what, how to ask and follow up, the
thread actions, and the person's own recent questions with links (pure; published with views.publish).

Built with slack_sdk's View and block models, which check Slack's limits; long lists are cut to fit the
tab's 100 blocks and each section's 3,000 characters, saying how many were left out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from slack_sdk.models.views import View

from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.rendering.blocks import (
    MODAL_BLOCKS_MAX,
    SECTION_TEXT_MAX,
    Block,
    context,
    divider,
    header,
    section,
)
from adapters.slack.rendering.mrkdwn import escape, link
from adapters.slack.rendering.texts import t
from adapters.slack.surfaces.catalogue import DatasetSummary
from core.insights.gaps import Gap
from core.models import RecordStatus
from core.record import Record
from core.sources.models import SourceState

HOME_CALLBACK = "kb_home"
RECENT_SHOWN = 5
QUESTION_SHOWN = 120
LIST_BLOCKS_MAX = 30  # per list (datasets, channels), so the fixed parts always fit
GAPS_SHOWN = 5
GAP_TEXT_SHOWN = 90


def _t(key: str, lang: str, **values: object) -> str:
    return t(f"home.{key}", lang, **values)


@dataclass(frozen=True, slots=True)
class RecentQuestion:
    """One of the person's questions, with a link to it when Slack gave one."""

    record: Record
    permalink: str | None = None


def slack_date(epoch: float, lang: str) -> str:
    """A date Slack renders in the reader's time zone, with a UTC fallback."""
    if epoch <= 0:
        return _t("never", lang)
    fallback = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))
    return f"<!date^{int(epoch)}^{{date_short_pretty}} {{time}}|{fallback}>"


def _listed(lines: Sequence[str], lang: str, *, max_blocks: int = LIST_BLOCKS_MAX) -> list[Block]:
    """Lines packed into sections of at most 3,000 characters, at most max_blocks of them (the last one
    saying how many lines did not fit)."""
    blocks: list[Block] = []
    current = ""
    for index, line in enumerate(lines):
        if current and len(current) + 1 + len(line) > SECTION_TEXT_MAX:
            if len(blocks) == max_blocks - 1:
                blocks.append(section(current + "\n" + _t("more", lang, n=len(lines) - index)))
                return blocks
            blocks.append(section(current))
            current = ""
        current = f"{current}\n{line}" if current else line
    if current:
        blocks.append(section(current))
    return blocks


def _datasets(summaries: Sequence[DatasetSummary], lang: str) -> list[Block]:
    if not summaries:
        return [section(_t("no_datasets", lang))]
    lines = [
        _t(
            "dataset_line",
            lang,
            name=escape(summary.name),
            documents=summary.documents,
            when=slack_date(summary.last_ingest, lang),
        )
        for summary in summaries
    ]
    return _listed(lines, lang)


def _scope_text(config: ChannelConfig, lang: str) -> str:
    if config.datasets is None:
        datasets = _t("everything", lang)
    else:
        datasets = ", ".join(escape(name) for name in config.datasets) or _t("nothing", lang)
    return datasets + (_t("mention_only", lang) if config.mention_only else "")


def _channels(scopes: Mapping[str, ChannelConfig], default: ChannelConfig, lang: str) -> list[Block]:
    lines = [
        _t("channel_line", lang, channel=f"<#{channel}>", datasets=_scope_text(config, lang))
        for channel, config in sorted(scopes.items())
        if channel != "default" and channel[:1] in "CGD" and channel.isalnum()
    ]
    others = _t("channel_line", lang, channel=_t("other_channels", lang), datasets=_scope_text(default, lang))
    return [section(others), *_listed(lines, lang, max_blocks=LIST_BLOCKS_MAX - 1)]  # never cut: first


def _recent(recent: Sequence[RecentQuestion], lang: str) -> list[Block]:
    if not recent:
        return [context(_t("no_recent", lang))]
    lines = []
    for item in recent[:RECENT_SHOWN]:
        record = item.record
        question = _one_line(record.question, QUESTION_SHOWN)
        shown = link(item.permalink, question) if item.permalink else escape(question)
        status = _t(f"status_{record.status.value}", lang)
        mark = "✓" if record.status == RecordStatus.ANSWERED else "·"
        lines.append(f"• {shown} — {mark} {status} · {slack_date(record.created_at, lang)}")
    return _listed(lines, lang)


def _one_line(text: str, limit: int) -> str:
    """The text on one line, cut to `limit` characters with "…" (not yet escaped for mrkdwn)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _gaps(gaps: Sequence[Gap], lang: str) -> list[Block]:
    """The most asked gaps: how often, an example question, what was judged missing."""
    lines = []
    for gap in gaps[:GAPS_SHOWN]:
        example = escape(_one_line(gap.examples[0], GAP_TEXT_SHOWN)) if gap.examples else ""
        line = _t("gap_line", lang, count=gap.count, example=example)
        if gap.missing:
            line += _t("gap_missing", lang, missing=escape(_one_line(gap.missing[0], GAP_TEXT_SHOWN)))
        lines.append(line)
    if len(gaps) > GAPS_SHOWN:
        lines.append(_t("more", lang, n=len(gaps) - GAPS_SHOWN))
    return [*_listed(lines, lang), context(_t("gaps_hint", lang))]


def _source_line(state: SourceState, lang: str) -> str:
    spec, last = state.spec, state.last
    names = {"name": escape(spec.name), "kind": escape(spec.kind), "dataset": escape(spec.dataset)}
    if last is None:
        return _t("source_never", lang, **names)
    if last.ok:
        result = _t(
            "source_result",
            lang,
            added=last.added,
            changed=last.changed,
            unchanged=last.unchanged,
            removed=last.removed,
            skipped=len(last.skipped),
        )
    else:
        result = _t("source_failed", lang, reason=escape(last.error))
    return _t("source_line", lang, when=slack_date(last.started_at, lang), result=result, **names)


def home_view(
    *,
    summaries: Sequence[DatasetSummary],
    scopes: Mapping[str, ChannelConfig],
    default_scope: ChannelConfig,
    recent: Sequence[RecentQuestion],
    lang: str = "en",
    sources: Sequence[SourceState] = (),
    gaps: Sequence[Gap] | None = None,
) -> dict[str, object]:
    """The Home tab for one person (a views.publish view); the synced sources' last syncs when there are some,
    and the top gaps when given (None: the person is not an admin, nothing is shown)."""
    blocks: list[Block] = [header(_t("title", lang)), section(_t("intro", lang)), divider()]
    blocks += [section(_t("datasets", lang)), *_datasets(summaries, lang), divider()]
    if sources:
        lines = [_source_line(state, lang) for state in sources]
        blocks += [section(_t("sources", lang)), *_listed(lines, lang), divider()]
    if gaps is not None:
        shown = _gaps(gaps, lang) if gaps else [context(_t("no_gaps", lang))]
        blocks += [section(_t("gaps", lang)), *shown, divider()]
    blocks += [section(_t("channels", lang)), *_channels(scopes, default_scope, lang), divider()]
    blocks += [section(_t("how", lang)), section(_t("how_text", lang)), divider()]
    blocks += [section(_t("actions", lang)), section(_t("actions_text", lang)), divider()]
    blocks += [section(_t("recent", lang)), *_recent(recent, lang)]
    view = View(type="home", callback_id=HOME_CALLBACK, blocks=blocks[:MODAL_BLOCKS_MAX])
    return view.to_dict()

"""Aggregate per-question results into the figures `kb eval` prints, per type and overall (pure)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.evaluation.runner import QuestionResult

ROLES = ("rewrite", "vote", "assess", "summary", "answer")


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass(frozen=True, slots=True)
class Rate:
    """A share with its counts, shown as "62% (31/50)"."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        return _share(self.hits, self.total)

    def __str__(self) -> str:
        return "—" if not self.total else f"{100 * self.hits / self.total:.0f}% ({self.hits}/{self.total})"


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """The figures of one group of questions (a type, or all)."""

    name: str
    questions: int
    failed: int
    baseline: Rate
    final: Rate
    any_round: Rate
    cited: Rate
    baseline_all: Rate
    final_all: Rate
    cited_of_final: Rate
    keywords: Rate
    notice_expected: Rate
    false_notice: Rate
    unhedged_miss: Rate  # answerable questions answered without a notice and without citing any gold
    overruled: Rate
    unsupported: Rate  # answers stating a claim no source holds
    attributed: Rate  # model-written sentences tied to a paragraph, of those attribution looked at
    markers_corrected: Rate  # model markers moved or removed, of the markers the model wrote
    left_out: Rate  # answers with a part the model left out, quoted from its sources
    mean_rounds: float
    calls: dict[str, float]
    latency_p50: float | None
    latency_p95: float | None
    latency_p50_unchecked: float | None  # the same without the claim check's time
    routes: dict[str, int] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready figures (rates as shares with counts)."""
        out: dict[str, object] = {}
        for key in self.__dataclass_fields__:
            value = getattr(self, key)
            out[key] = (
                {"share": value.value, "hits": value.hits, "total": value.total}
                if isinstance(value, Rate)
                else value
            )
        return out


def _gold_rate(results: Sequence[QuestionResult], attribute: str) -> Rate:
    flags = [flag for result in results for flag in getattr(result, attribute)]
    return Rate(sum(flags), len(flags))


def _all_rate(results: Sequence[QuestionResult], attribute: str) -> Rate:
    with_gold = [result for result in results if result.gold]
    return Rate(sum(all(getattr(result, attribute)) for result in with_gold), len(with_gold))


def summarise(name: str, results: Sequence[QuestionResult]) -> GroupSummary:
    """The figures of a group of results."""
    answered = [result for result in results if result.status == "answered"]
    expected = [result for result in answered if result.expect_notice]
    unexpected = [result for result in answered if not result.expect_notice]
    answerable = [result for result in unexpected if result.gold]  # a miss shows only where gold exists
    final_flags = [f for result in answered for f in result.final_found]
    cited_in_final = [
        cited
        for result in answered
        for cited, final in zip(result.cited_found, result.final_found, strict=True)
        if final
    ]
    calls = {
        role: statistics.fmean(result.calls.get(role, 0) for result in answered) if answered else 0.0
        for role in ROLES
    }
    routes = Counter(("escalated" if result.escalated else result.route or "none") for result in answered)
    sources = Counter(result.route_source or "none" for result in answered)
    seconds = [result.seconds for result in answered]
    return GroupSummary(
        name=name,
        questions=len(results),
        failed=len(results) - len(answered),
        baseline=_gold_rate(results, "baseline_found"),
        final=_gold_rate(answered, "final_found"),
        any_round=_gold_rate(answered, "any_round_found"),
        cited=_gold_rate(answered, "cited_found"),
        baseline_all=_all_rate(results, "baseline_found"),
        final_all=_all_rate(answered, "final_found"),
        cited_of_final=Rate(sum(cited_in_final), sum(final_flags)),
        keywords=_gold_rate(answered, "keywords_found"),
        notice_expected=Rate(sum(result.notice for result in expected), len(expected)),
        false_notice=Rate(sum(result.notice for result in unexpected), len(unexpected)),
        unhedged_miss=Rate(
            sum(not result.notice and not any(result.cited_found) for result in answerable), len(answerable)
        ),
        overruled=Rate(
            sum(result.overruled > 0 for result in answered),
            sum(result.calls.get("assess", 0) > 0 for result in answered),
        ),
        unsupported=Rate(sum(bool(result.unsupported) for result in answered), len(answered)),
        attributed=Rate(
            sum(
                result.attributions.get(how, 0)
                for result in answered
                for how in ("kept", "corrected", "added")
            ),
            sum(sum(result.attributions.values()) for result in answered),
        ),
        markers_corrected=Rate(
            sum(result.attributions.get(how, 0) for result in answered for how in ("corrected", "removed")),
            sum(
                result.attributions.get(how, 0)
                for result in answered
                for how in ("kept", "corrected", "removed")
            ),
        ),
        left_out=Rate(sum(bool(result.left_out) for result in answered), len(answered)),
        mean_rounds=statistics.fmean(result.rounds for result in answered) if answered else 0.0,
        calls=calls,
        latency_p50=_percentile(seconds, 0.5),
        latency_p95=_percentile(seconds, 0.95),
        latency_p50_unchecked=_percentile([r.seconds - r.claims_seconds for r in answered], 0.5),
        routes=dict(routes),
        sources=dict(sources),
    )


def summarise_all(results: Sequence[QuestionResult]) -> list[GroupSummary]:
    """One summary per type (in order of first appearance), then "all"."""
    types = list(dict.fromkeys(result.type for result in results))
    groups = [summarise(kind, [r for r in results if r.type == kind]) for kind in types]
    return [*groups, summarise("all", results)] if len(types) > 1 else groups or [summarise("all", [])]

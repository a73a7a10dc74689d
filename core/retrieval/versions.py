"""Versions of the same text: prefer the current one unless the question names a year (pure).

Documents whose names are a title plus a date — ``行政复议法(2017-09-01)`` and ``行政复议法(2023-09-01)``,
``Handbook (2024)`` — are versions of one text. Among the candidates of a question, the preferred version of
each title is the newest, or, when the question names a year ("按照2018年修正的公司法", "the 2015 edition"),
the version dated in that year (or, when the question names the title too, the newest one dated in or
before it). Hits of the other versions keep their place in the
evidence but move behind every other hit, with their score halved, so the answer and its citations draw on
the preferred version first; ``version_note`` tells the reader which version was cited when others were found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.messages import text
from core.models import Hit

_DATED = re.compile(
    r"^(?P<title>.+?)\s*[（(]\s*(?P<year>(?:19|20)\d\d)(?:[-./年](?P<month>\d{1,2}))?(?:[-./月](?P<day>\d{1,2}))?"
    r"\s*日?(?:\s*[^()（）]{0,8})?[)）]\s*$"
)
_EXTENSION = re.compile(r"\.(?:md|markdown|txt|html?|pdf|docx?)$", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
DEMOTION = 0.5


@dataclass(frozen=True, slots=True)
class Version:
    """A document name read as (title, date)."""

    title: str
    date: tuple[int, int, int]

    @property
    def label(self) -> str:
        year, month, day = self.date
        return f"{year:04d}-{month:02d}-{day:02d}" if month else f"{year:04d}"


def version_of(document_name: str) -> Version | None:
    """The title and date of a dated document name, or None."""
    match = _DATED.match(_EXTENSION.sub("", document_name.strip()))
    if not match:
        return None
    date = (int(match["year"]), int(match["month"] or 0), int(match["day"] or 0))
    return Version(match["title"].strip(), date)


def preferred_versions(question: str, hits: Sequence[Hit]) -> dict[str, tuple[int, int, int]]:
    """For each title with two or more versions among the hits, the date of the version to prefer."""
    dates: dict[str, set[tuple[int, int, int]]] = {}
    for hit in hits:
        version = version_of(hit.document_name)
        if version is not None:
            dates.setdefault(version.title, set()).add(version.date)
    named = [int(year) for year in _YEAR.findall(question)]
    chosen: dict[str, tuple[int, int, int]] = {}
    for title, versions in dates.items():
        if len(versions) < 2:
            continue
        ordered = sorted(versions)
        pick = ordered[-1]
        for year in named:
            exact = [date for date in ordered if date[0] == year]
            earlier = [date for date in ordered if date[0] <= year] if title in question else []
            if exact or earlier:
                pick = (exact or earlier)[-1]
                break
        chosen[title] = pick
    return chosen


def prefer_versions(question: str, hits: Sequence[Hit]) -> list[Hit]:
    """The hits with other versions of a multi-version title moved behind the rest (scores halved)."""
    chosen = preferred_versions(question, hits)
    if not chosen:
        return list(hits)
    kept: list[Hit] = []
    demoted: list[Hit] = []
    for hit in hits:
        version = version_of(hit.document_name)
        if version is not None and version.title in chosen and version.date != chosen[version.title]:
            demoted.append(replace(hit, score=round(hit.score * DEMOTION, 6)))
        else:
            kept.append(hit)
    return [*kept, *demoted]


def version_note(cited: Sequence[str], evidence: Sequence[Hit], lang: str) -> str:
    """Which version the answer cites, when the evidence held other versions of the same text ("" if none):
    one line per title, naming every cited version of it and the versions found but not cited (none when
    every version found is cited)."""
    found: dict[str, set[str]] = {}
    for hit in evidence:
        version = version_of(hit.document_name)
        if version is not None:
            found.setdefault(version.title, set()).add(version.label)
    quoted: dict[str, list[str]] = {}
    for name in dict.fromkeys(cited):
        version = version_of(name)
        if version is not None and version.label not in quoted.setdefault(version.title, []):
            quoted[version.title].append(version.label)
    separator = text("answer.version_separator", lang)
    lines = []
    for title, labels in quoted.items():
        rest = sorted(found.get(title, set()) - set(labels))
        if rest:
            lines.append(
                text(
                    "answer.version_note",
                    lang,
                    title=title,
                    label=separator.join(labels),
                    others=separator.join(rest),
                )
            )
    return "\n".join(lines)

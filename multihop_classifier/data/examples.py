"""Labelled examples as JSONL ``{question, label: single|multi, features}``, validated, and the seeded 8/1/1 split."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multihop_classifier import LABELS
from multihop_classifier.data.features import FeatureError, parse_features


class DataError(ValueError):
    """A data file that cannot be used, with the file and line that is wrong."""


@dataclass(frozen=True, slots=True)
class Example:
    """One labelled question; ``features`` are the five rule features (None until computed)."""

    question: str
    label: str
    features: dict[str, float] | None = None
    source: str = ""
    kind: str = ""
    lang: str = ""
    reviewed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_multi(self) -> bool:
        """True for a multi-hop label."""
        return self.label == "multi"

    def to_dict(self) -> dict[str, Any]:
        """The JSONL record (optional fields only when set)."""
        record: dict[str, Any] = {"question": self.question, "label": self.label, "features": self.features}
        for name in ("source", "kind", "lang"):
            if getattr(self, name):
                record[name] = getattr(self, name)
        if self.reviewed:
            record["reviewed"] = True
        record.update(self.extra)
        return record


def example_from_dict(record: Any, *, where: str = "") -> Example:
    """Validate one record; raises DataError naming ``where`` and the field that is wrong."""
    prefix = f"{where}: " if where else ""
    if not isinstance(record, dict):
        raise DataError(f"{prefix}a record must be a JSON object, got {type(record).__name__}")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataError(f"{prefix}'question' must be a non-empty string")
    label = record.get("label")
    if label not in LABELS:
        raise DataError(f"{prefix}'label' must be 'single' or 'multi', got {label!r}")
    features = record.get("features")
    if features is not None:
        try:
            features = parse_features(features)
        except FeatureError as exc:
            raise DataError(f"{prefix}{exc}") from exc
    known = {"question", "label", "features", "source", "kind", "lang", "reviewed"}
    return Example(
        question=question.strip(),
        label=label,
        features=features,
        source=str(record.get("source") or ""),
        kind=str(record.get("kind") or ""),
        lang=str(record.get("lang") or ""),
        reviewed=record.get("reviewed") is True,
        extra={key: value for key, value in record.items() if key not in known},
    )


def read_examples(path: Path) -> list[Example]:
    """All examples of a JSONL file (blank lines skipped); DataError names the first bad line."""
    if not path.is_file():
        raise DataError(f"{path}: no such data file")
    examples = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            examples.append(example_from_dict(record, where=f"{path}:{number}"))
    if not examples:
        raise DataError(f"{path}: no examples")
    return examples


def write_examples(path: Path, examples: Iterable[Example]) -> int:
    """Write examples as JSONL (UTF-8, one object a line); returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for example in examples:
            handle.write(json.dumps(example.to_dict(), ensure_ascii=False) + "\n")
            count += 1
    return count


def deduplicate(examples: Iterable[Example]) -> Iterator[Example]:
    """Examples with a question seen before (same text) dropped, first one kept."""
    seen: set[str] = set()
    for example in examples:
        key = " ".join(example.question.split()).lower()
        if key not in seen:
            seen.add(key)
            yield example


@dataclass(frozen=True, slots=True)
class Split:
    """The train / validation / test partition of one data set."""

    train: list[Example]
    validation: list[Example]
    test: list[Example]


def _groups(examples: list[Example], key: str | None) -> list[list[Example]]:
    """Examples grouped by ``extra[key]`` (each example alone when key is None or the example has none)."""
    if key is None:
        return [[example] for example in examples]
    grouped: dict[str, list[Example]] = {}
    for index, example in enumerate(examples):
        grouped.setdefault(str(example.extra.get(key, f"#{index}")), []).append(example)
    return list(grouped.values())


def split_examples(
    examples: Sequence[Example],
    *,
    seed: int,
    ratios: tuple[int, int, int] = (8, 1, 1),
    group_by: str | None = None,
) -> Split:
    """A seeded split stratified by label and cut by ``ratios`` (8/1/1 by default).

    With ``group_by`` (e.g. "template") whole groups go to one split, so the test split holds only
    templates the model never saw: the sizes then follow the ratios as closely as whole groups allow.
    """
    total = sum(ratios)
    parts: tuple[list[Example], list[Example], list[Example]] = ([], [], [])
    rng = random.Random(seed)
    for label in LABELS:
        groups = _groups([example for example in examples if example.label == label], group_by)
        rng.shuffle(groups)
        size = sum(len(group) for group in groups)
        wanted = {2: size * ratios[2] / total, 1: size * ratios[1] / total}
        taken = {1: 0, 2: 0}
        for group in groups:
            target = next((k for k in (2, 1) if taken[k] + len(group) / 2 <= wanted[k]), 0)
            parts[target].extend(group)
            if target:
                taken[target] += len(group)
    for part in parts:
        rng.shuffle(part)
    return Split(*parts)

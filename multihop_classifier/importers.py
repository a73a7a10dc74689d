"""Importers that label public sets for training: HotpotQA questions as multi, CMRC 2018 questions as single.

Both read the files in place (never copied into the project). HotpotQA is built so that every question
needs two paragraphs (bridge or comparison); CMRC 2018 questions are span extraction from one passage.
The labels are a convention of these sets, not a review: see the labelling guide before relying on them.
The HotpotQA train-100 sample beside the dev-500 file is reserved for validation and is refused here.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from multihop_classifier.examples import DataError, Example
from multihop_classifier.features import compute_features

VALIDATION_ONLY = ("hotpotqa_train100_questions.json",)


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        return json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc.msg})") from exc


def _hotpotqa_questions(path: Path) -> Iterator[tuple[str, str]]:
    """(question, id) from the IRCoT JSONL format (``question_text``) or the original JSON list (``question``)."""
    if path.name in VALIDATION_ONLY:
        raise DataError(f"{path.name} is reserved for validation; import the dev-500 file for training")
    if path.suffix == ".jsonl":
        if not path.is_file():
            raise DataError(f"{path}: no such file")
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DataError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
                    yield (
                        record.get("question_text") or record.get("question") or "",
                        str(record.get("question_id", number)),
                    )
        return
    records = _read_json(path)
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a list of HotpotQA questions")
    for index, record in enumerate(records):
        yield record.get("question", ""), str(record.get("_id", index))


def _cmrc_questions(path: Path) -> Iterator[tuple[str, str]]:
    """(question, id) from a SQuAD-style CMRC 2018 file."""
    document = _read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise DataError(f"{path}: expected a SQuAD-style object with 'data'")
    for article in document["data"]:
        for paragraph in article.get("paragraphs", []):
            for qa in paragraph.get("qas", []):
                yield qa.get("question", ""), str(qa.get("id", ""))


def _sample(pairs: Iterator[tuple[str, str]], limit: int | None, seed: int) -> list[tuple[str, str]]:
    kept = [(q.strip(), i) for q, i in pairs if isinstance(q, str) and q.strip()]
    if limit is not None and limit < len(kept):
        kept = random.Random(seed).sample(kept, limit)
    return kept


def import_examples(kind: str, path: Path, *, limit: int | None = None, seed: int = 7) -> list[Example]:
    """Examples from a public set: ``hotpotqa`` -> multi (en), ``cmrc`` -> single (zh); ``limit`` samples."""
    if kind == "hotpotqa":
        pairs, label, lang = _hotpotqa_questions(path), "multi", "en"
    elif kind == "cmrc":
        pairs, label, lang = _cmrc_questions(path), "single", "zh"
    else:
        raise DataError(f"unknown public set {kind!r} (expected 'hotpotqa' or 'cmrc')")
    return [
        Example(
            question=question,
            label=label,
            features=compute_features(question),
            source=kind,
            kind=kind,
            lang=lang,
            extra={"source_id": source_id},
        )
        for question, source_id in _sample(pairs, limit, seed)
    ]

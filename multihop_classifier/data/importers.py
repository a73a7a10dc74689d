"""Importers that label public sets: HotpotQA questions as multi, CMRC 2018 as single (training), kb eval sets (eval).

Both read the files in place (never copied into the project). HotpotQA is built so that every question
needs two paragraphs (bridge or comparison); CMRC 2018 questions are span extraction from one passage.
The labels are a convention of these sets, not a review: see the labelling guide before relying on them.
The HotpotQA train-100 sample beside the dev-500 file is reserved for validation: it imports only with
``validation_only`` (the examples are marked so, and ``train`` refuses them), for ``eval --data``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from multihop_classifier.data.examples import DataError, Example
from multihop_classifier.data.features import compute_features

VALIDATION_ONLY = ("hotpotqa_train100_questions.json",)
# The bot's own evaluation sets (`kb eval` format, e.g. tests/eval/laws_zh.jsonl): always eval-only.
KB_EVAL_LABELS = {
    "multihop": "multi",
    "compound": "multi",
    "single": "single",
    "version": "single",
    "absent": "single",
}


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        return json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc.msg})") from exc


def _hotpotqa_questions(path: Path) -> Iterator[tuple[str, str]]:
    """(question, id) from the IRCoT JSONL format (``question_text``) or the original JSON list (``question``)."""
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


def _kb_eval_questions(path: Path) -> Iterator[tuple[str, str, str]]:
    """(question, id, label) of a `kb eval` question set; follow-ups are skipped (they need their history)."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            label = KB_EVAL_LABELS.get(str(record.get("type")))
            if label is not None:
                yield str(record.get("question") or ""), str(record.get("id", number)), label


def _sample(pairs: Iterator[tuple[str, str]], limit: int | None, seed: int) -> list[tuple[str, str]]:
    kept = [(q.strip(), i) for q, i in pairs if isinstance(q, str) and q.strip()]
    if limit is not None and limit < len(kept):
        kept = random.Random(seed).sample(kept, limit)
    return kept


def _labelled(pairs: Iterator[tuple[str, str]], label: str) -> Iterator[tuple[str, str, str]]:
    for question, source_id in pairs:
        yield question, source_id, label


def _language(text: str) -> str:
    return "zh" if any("\u4e00" <= char <= "\u9fff" for char in text) else "en"


def import_examples(
    kind: str, path: Path, *, limit: int | None = None, seed: int = 7, validation_only: bool = False
) -> list[Example]:
    """Examples from a public set: ``hotpotqa`` -> multi, ``cmrc`` -> single, ``kb-eval`` by question type.

    ``limit`` draws a seeded sample. A ``kb-eval`` set (the bot's own evaluation questions) is always
    marked validation_only: it measures the classifier on the bot's domain and is never trained on.
    """
    if path.name in VALIDATION_ONLY and not validation_only:
        raise DataError(
            f"{path.name} is reserved for validation: import it with --validation-only (for eval, never train)"
        )
    if kind == "hotpotqa":
        triples = _labelled(_hotpotqa_questions(path), "multi")
    elif kind == "cmrc":
        triples = _labelled(_cmrc_questions(path), "single")
    elif kind == "kb-eval":
        triples, validation_only = _kb_eval_questions(path), True
    else:
        raise DataError(f"unknown public set {kind!r} (expected 'hotpotqa', 'cmrc' or 'kb-eval')")
    labels = {}
    pairs = []
    for question, source_id, label in triples:
        labels[source_id] = label
        pairs.append((question, source_id))
    return [
        Example(
            question=question,
            label=labels[source_id],
            features=compute_features(question),
            source=kind,
            kind=kind,
            lang=_language(question),
            extra={"source_id": source_id, **({"validation_only": True} if validation_only else {})},
        )
        for question, source_id in _sample(iter(pairs), limit, seed)
    ]

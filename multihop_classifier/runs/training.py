"""``train``: read JSONL data, fill in rule features, split 8/1/1 (seeded), encode, train the head, save a run.

A run directory holds the model (``model.json``, ``head.npz``), the three splits it used
(``splits/*.jsonl``, so ``eval`` scores exactly the held-back test split) and ``training.json``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from core.retrieval.complexity import FEATURE_NAMES
from multihop_classifier import MAX_TOKENS
from multihop_classifier.data.examples import (
    DataError,
    Example,
    deduplicate,
    read_examples,
    split_examples,
    write_examples,
)
from multihop_classifier.data.features import compute_features
from multihop_classifier.model.classifier import FORMAT, ClassifierModel, model_inputs, model_version
from multihop_classifier.model.encoders import UseEncoder
from multihop_classifier.model.encoding import Encoder
from multihop_classifier.model.head import HeadConfig, train_head
from multihop_classifier.runs.metrics import f1_at, threshold_for_recall

RECALL_TARGET = 0.85
REVIEWED_FOR_REAL_TRAINING = 500
MIN_PER_LABEL = 10
TRAINING_FILE = "training.json"
SPLITS = ("train", "validation", "test")


@dataclass(frozen=True, slots=True)
class TrainOptions:
    """What ``train`` needs besides the data; defaults 8/1/1, 128 tokens, 5 epochs.

    See docs/design.md#the-classifier-service.
    """

    seed: int = 13
    head: HeadConfig = field(default_factory=HeadConfig)
    max_tokens: int = MAX_TOKENS
    recall_target: float = RECALL_TARGET
    recompute_features: bool = False
    split: str = "random"  # or "template": whole templates per split (generalisation to unseen wording)


def load_training_data(paths: Sequence[Path], *, recompute: bool = False) -> list[Example]:
    """All examples of the files, duplicates dropped, features computed where missing (or everywhere)."""
    examples: list[Example] = []
    for path in paths:
        examples.extend(read_examples(path))
    examples = [e for e in deduplicate(examples) if e.extra.get("review") != "dropped"]
    reserved = [example for example in examples if example.extra.get("validation_only")]
    if reserved:
        raise DataError(
            f"{len(reserved)} examples are marked validation_only (e.g. {reserved[0].question[:60]!r}): "
            "they are for eval --data, never for training"
        )
    counts = Counter(example.label for example in examples)
    for label in ("single", "multi"):
        if counts[label] < MIN_PER_LABEL:
            raise DataError(
                f"training needs at least {MIN_PER_LABEL} '{label}' examples, the data has {counts[label]}"
            )
    return [
        replace(example, features=compute_features(example.question))
        if recompute or example.features is None
        else example
        for example in examples
    ]


def encode_examples(encoder: Encoder, examples: Sequence[Example]) -> tuple[np.ndarray, np.ndarray, int]:
    """Encoder vectors of the questions, the 0/1 labels, and how many questions were cut to max_tokens."""
    encoded = encoder.encode([example.question for example in examples])
    labels = np.array([1.0 if example.is_multi else 0.0 for example in examples])
    return encoded.vectors, labels, sum(encoded.truncated)


def _summary(examples: Sequence[Example]) -> dict[str, Any]:
    return {
        "count": len(examples),
        "labels": dict(Counter(example.label for example in examples)),
        "sources": dict(Counter(example.source or "unknown" for example in examples)),
    }


def train(
    data: Sequence[Path],
    out: Path,
    *,
    encoder: Encoder | None = None,
    options: TrainOptions = TrainOptions(),
    log: Callable[[str], None] = print,
) -> ClassifierModel:
    """Train a classifier on the data files and save it, with its splits, into the run directory ``out``."""
    started = time.perf_counter()
    examples = load_training_data(data, recompute=options.recompute_features)
    reviewed = sum(example.reviewed for example in examples)
    if reviewed < REVIEWED_FOR_REAL_TRAINING:
        log(
            f"note: {reviewed} reviewed examples (< {REVIEWED_FOR_REAL_TRAINING}): a seed run, not a formal "
            "training run (see the labelling guide in multihop_classifier/README.md)"
        )
    if options.split not in ("random", "template"):
        raise DataError(f"split must be 'random' or 'template', got {options.split!r}")
    if options.split == "template" and not any("template" in example.extra for example in examples):
        raise DataError("--split template needs examples with a 'template' field (from `generate`)")
    split = split_examples(
        examples, seed=options.seed, group_by="template" if options.split == "template" else None
    )
    for name in SPLITS:
        write_examples(out / "splits" / f"{name}.jsonl", getattr(split, name))
    encoder = encoder or UseEncoder(max_tokens=options.max_tokens)
    log(
        f"data: {len(examples)} examples -> train {len(split.train)} / validation {len(split.validation)} / "
        f"test {len(split.test)} ({options.split} split, seed {options.seed}); encoder {encoder.name}"
    )
    train_vectors, train_y, cut_train = encode_examples(encoder, split.train)
    validation_vectors, validation_y, cut_validation = encode_examples(encoder, split.validation)
    train_x = model_inputs(train_vectors, [e.features or {} for e in split.train])
    validation_x = model_inputs(validation_vectors, [e.features or {} for e in split.validation])
    trained = train_head(
        train_x, train_y, validation_x, validation_y, config=options.head, validation_f1=f1_at
    )
    for record in trained.history:
        log(f"epoch {record.epoch}: loss {record.loss:.4f}, validation F1 {record.validation_f1:.4f}")
    threshold = threshold_for_recall(
        validation_y, trained.head.probabilities(validation_x), target=options.recall_target
    )
    today = datetime.now(UTC)
    meta = {
        "format": FORMAT,
        "model_version": model_version(encoder.name, trained.head, today.strftime("%Y%m%d")),
        "trained_at": today.isoformat(timespec="seconds"),
        "max_tokens": options.max_tokens,
        "feature_names": list(FEATURE_NAMES),
        "recall_target": options.recall_target,
        "head": asdict(options.head),
    }
    model = ClassifierModel(encoder=encoder, head=trained.head, threshold=threshold, meta=meta)
    model.save(out)
    report = {
        "model_version": model.version,
        "seed": options.seed,
        "split": options.split,
        "data": [str(path) for path in data],
        "examples": _summary(examples),
        "reviewed_examples": reviewed,
        "splits": {name: _summary(getattr(split, name)) for name in SPLITS},
        "truncated_questions": {"train": cut_train, "validation": cut_validation},
        "history": [asdict(record) for record in trained.history],
        "best_epoch": trained.best_epoch,
        "stopped": trained.stopped,
        "threshold": threshold,
        "seconds": round(time.perf_counter() - started, 2),
    }
    (out / TRAINING_FILE).write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", "utf-8")
    log(
        f"best epoch {trained.best_epoch} ({trained.stopped}); threshold {threshold:.4f} for validation "
        f"recall >= {options.recall_target}; model {model.version} saved to {out} in {report['seconds']} s"
    )
    return model

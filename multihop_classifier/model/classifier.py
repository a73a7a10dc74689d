"""A trained classifier on disk and in memory: encoder + head + threshold + ``model_version``.

A model directory holds ``model.json`` (encoder, threshold, version, training summary) and ``head.npz``
(weights and input scaling). A BERT model names its backbone directory; the backbone is never copied.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.retrieval.complexity import FEATURE_NAMES
from multihop_classifier import MAX_TOKENS
from multihop_classifier.data.features import compute_features, feature_matrix
from multihop_classifier.model.encoders import load_encoder
from multihop_classifier.model.encoding import Encoder
from multihop_classifier.model.head import Head

MODEL_FILE = "model.json"
HEAD_FILE = "head.npz"
FORMAT = 1


class ModelMissing(RuntimeError):
    """No usable model at a directory: missing files, unreadable or an unknown format."""


@dataclass(frozen=True, slots=True)
class Prediction:
    """One question's answer from the model."""

    probability: float
    label: str
    features: dict[str, float]
    features_source: str
    tokens: int
    truncated: bool


def model_version(encoder_name: str, head: Head, trained_on: str) -> str:
    """``mhc-<encoder>-<YYYYMMDD>-<hash of the weights>``: sortable by date, unique per weights."""
    digest = hashlib.sha256()
    for name, array in sorted(head.arrays().items()):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    short = encoder_name.split(":")[-1].split("-")[0].lower() or "enc"
    return f"mhc-{short}-{trained_on}-{digest.hexdigest()[:8]}"


def model_inputs(vectors: np.ndarray, features: Sequence[dict[str, float]]) -> np.ndarray:
    """The head's input rows: encoder vectors beside log1p rule features."""
    return np.hstack([vectors.astype(np.float64), feature_matrix(features)])


class ClassifierModel:
    """Encoder + head: P(multi-hop) for questions, with their rule features computed when not given."""

    def __init__(self, *, encoder: Encoder, head: Head, threshold: float, meta: dict[str, Any]) -> None:
        self.encoder = encoder
        self.head = head
        self.threshold = threshold
        self.meta = meta

    @property
    def version(self) -> str:
        """The model_version recorded at training time."""
        return str(self.meta["model_version"])

    def predict(
        self, questions: Sequence[str], features: Sequence[dict[str, float] | None] | None = None
    ) -> list[Prediction]:
        """Predictions for questions (CPU-bound: call from a worker thread)."""
        given = list(features) if features is not None else [None] * len(questions)
        resolved = [
            known if known is not None else compute_features(q)
            for q, known in zip(questions, given, strict=True)
        ]
        encoded = self.encoder.encode(questions)
        probabilities = self.head.probabilities(model_inputs(encoded.vectors, resolved))
        return [
            Prediction(
                probability=round(float(probability), 6),
                label="multi" if probability >= self.threshold else "single",
                features=resolved[index],
                features_source="computed" if given[index] is None else "request",
                tokens=encoded.tokens[index],
                truncated=encoded.truncated[index],
            )
            for index, probability in enumerate(probabilities)
        ]

    def save(self, directory: Path) -> None:
        """Write model.json and head.npz into directory."""
        directory.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = self.head.arrays()
        np.savez(directory / HEAD_FILE, **arrays)
        meta = {**self.meta, "threshold": self.threshold, "encoder": self.encoder.spec()}
        (directory / MODEL_FILE).write_text(json.dumps(meta, ensure_ascii=False, indent=2) + "\n", "utf-8")


def read_meta(directory: Path) -> dict[str, Any]:
    """model.json of a model directory; ModelMissing when absent or unreadable."""
    path = directory / MODEL_FILE
    if not path.is_file() or not (directory / HEAD_FILE).is_file():
        raise ModelMissing(f"no model at {directory} ({MODEL_FILE} and {HEAD_FILE} are needed)")
    try:
        meta = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelMissing(f"{path} is not readable JSON: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or "model_version" not in meta:
        raise ModelMissing(f"{path} is not a format-{FORMAT} classifier model")
    if list(meta.get("feature_names", [])) != list(FEATURE_NAMES):
        raise ModelMissing(f"{path} was trained on other features: {meta.get('feature_names')}")
    return meta


def resolve_model_dir(directory: Path) -> Path:
    """The model directory itself, or in an export folder the version named by LATEST (else the newest)."""
    if (directory / MODEL_FILE).is_file():
        return directory
    latest = directory / "LATEST"
    if latest.is_file():
        return directory / latest.read_text("utf-8").strip()
    versions = (
        sorted(p for p in directory.glob("*/") if (p / MODEL_FILE).is_file()) if directory.is_dir() else []
    )
    if not versions:
        raise ModelMissing(
            f"no model at {directory}: train and export one (see multihop_classifier/README.md)"
        )
    return versions[-1]


def load_model(directory: Path, *, encoder_path: Path | None = None) -> ClassifierModel:
    """The model at directory (or the latest version in an export folder); loads its encoder."""
    resolved = resolve_model_dir(directory)
    meta = read_meta(resolved)
    try:
        with np.load(resolved / HEAD_FILE) as arrays:
            head = Head.from_arrays(arrays)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelMissing(f"{resolved / HEAD_FILE} is not readable: {exc}") from exc
    encoder = load_encoder(
        meta["encoder"], path=encoder_path, max_tokens=int(meta.get("max_tokens", MAX_TOKENS))
    )
    expected = head.mean.shape[0] - len(FEATURE_NAMES)
    if encoder.dimension != expected:
        raise ModelMissing(
            f"the encoder {encoder.name} gives {encoder.dimension}-d vectors, the head expects {expected}"
        )
    return ClassifierModel(encoder=encoder, head=head, threshold=float(meta["threshold"]), meta=meta)

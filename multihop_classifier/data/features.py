"""The five rule features (computed by the router's own extractor, ``core.retrieval.complexity``) and their checks.

The service and the training data use exactly the numbers the router sends, so the extractor is imported,
never copied. ``parse_features`` validates features that arrive in a request or a data file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from core.retrieval.complexity import FEATURE_NAMES, extract_features


class FeatureError(ValueError):
    """Features that are not the five non-negative numbers the model expects."""


def compute_features(question: str) -> dict[str, float]:
    """The five rule features of a question by name (CPU-bound jieba: call from a worker thread)."""
    return extract_features(question).as_dict()


def parse_features(value: Any) -> dict[str, float]:
    """Features as a name -> number object (or a list of five numbers in FEATURE_NAMES order), validated."""
    if isinstance(value, list):
        if len(value) != len(FEATURE_NAMES):
            raise FeatureError(f"'features' as a list needs {len(FEATURE_NAMES)} numbers, got {len(value)}")
        value = dict(zip(FEATURE_NAMES, value, strict=True))
    if not isinstance(value, dict):
        raise FeatureError("'features' must be an object with " + ", ".join(FEATURE_NAMES))
    missing = [name for name in FEATURE_NAMES if name not in value]
    unknown = sorted(set(value) - set(FEATURE_NAMES))
    if missing or unknown:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing))
        if unknown:
            parts.append("unknown " + ", ".join(map(str, unknown)))
        raise FeatureError("'features': " + "; ".join(parts))
    parsed: dict[str, float] = {}
    for name in FEATURE_NAMES:
        number = value[name]
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise FeatureError(f"'features.{name}' must be a number, got {type(number).__name__}")
        if not math.isfinite(number) or number < 0:
            raise FeatureError(f"'features.{name}' must be finite and >= 0, got {number!r}")
        parsed[name] = float(number)
    return parsed


def feature_matrix(features: Sequence[dict[str, float]]) -> np.ndarray:
    """Rows of log1p(count) in FEATURE_NAMES order: counts and lengths grow slowly past a few."""
    rows = [[features_row[name] for name in FEATURE_NAMES] for features_row in features]
    return np.log1p(np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURE_NAMES)))

"""Binary metrics for multi-hop (positive) vs single-hop: accuracy, precision, recall, F1, AUC, confusion, ROC."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class Metrics:
    """Metrics at one decision threshold; ``confusion`` is [[TN, FP], [FN, TP]] (rows = truth)."""

    threshold: float
    accuracy: float
    precision: float
    recall: float
    f1: float
    auc: float | None  # None when the data holds one class only
    confusion: list[list[int]]
    count: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator else 0.0


def confusion(truth: np.ndarray, probability: np.ndarray, threshold: float) -> tuple[int, int, int, int]:
    """(TN, FP, FN, TP) with multi predicted at probability >= threshold."""
    predicted = probability >= threshold
    actual = truth.astype(bool)
    return (
        int(np.sum(~predicted & ~actual)),
        int(np.sum(predicted & ~actual)),
        int(np.sum(~predicted & actual)),
        int(np.sum(predicted & actual)),
    )


def f1_at(truth: np.ndarray, probability: np.ndarray, threshold: float = 0.5) -> float:
    """F1 of the multi-hop class at a threshold."""
    _, fp, fn, tp = confusion(truth, probability, threshold)
    return _ratio(2 * tp, 2 * tp + fp + fn)


def roc_auc(truth: np.ndarray, probability: np.ndarray) -> float | None:
    """Area under the ROC curve by the rank statistic (ties count half); None when one class is absent."""
    positives = probability[truth.astype(bool)]
    negatives = probability[~truth.astype(bool)]
    if not len(positives) or not len(negatives):
        return None
    greater = (positives[:, None] > negatives[None, :]).sum()
    ties = (positives[:, None] == negatives[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(positives) * len(negatives)))


def binary_metrics(truth: np.ndarray, probability: np.ndarray, threshold: float = 0.5) -> Metrics:
    """All metrics at ``threshold``."""
    tn, fp, fn, tp = confusion(truth, probability, threshold)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    return Metrics(
        threshold=round(float(threshold), 4),
        accuracy=round(_ratio(tp + tn, len(truth)), 4),
        precision=round(precision, 4),
        recall=round(recall, 4),
        f1=round(_ratio(2 * tp, 2 * tp + fp + fn), 4),
        auc=None if (auc := roc_auc(truth, probability)) is None else round(auc, 4),
        confusion=[[tn, fp], [fn, tp]],
        count=len(truth),
    )


def roc_curve(truth: np.ndarray, probability: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """False-positive rates, true-positive rates and the thresholds that give them (descending)."""
    thresholds = np.concatenate(([np.inf], np.unique(probability)[::-1]))
    positives = max(1, int(truth.sum()))
    negatives = max(1, len(truth) - int(truth.sum()))
    fpr = np.array([confusion(truth, probability, t)[1] / negatives for t in thresholds])
    tpr = np.array([confusion(truth, probability, t)[3] / positives for t in thresholds])
    return fpr, tpr, thresholds


def threshold_for_recall(
    truth: np.ndarray, probability: np.ndarray, *, target: float, default: float = 0.5
) -> float:
    """``default`` when it already reaches the recall target, else the highest threshold that does."""
    _, _, fn, tp = confusion(truth, probability, default)
    if _ratio(tp, tp + fn) >= target or not truth.sum():
        return default
    for candidate in np.unique(probability)[::-1]:
        _, _, fn, tp = confusion(truth, probability, float(candidate))
        if _ratio(tp, tp + fn) >= target:
            return float(candidate)
    return float(probability.min())


def router_bands(
    truth: np.ndarray, probability: np.ndarray, *, multi: float = 0.8, single: float = 0.2
) -> dict[str, Any]:
    """How the router's classifier tier would use these probabilities: share and accuracy of each band."""
    high, low = probability >= multi, probability <= single
    middle = ~high & ~low
    actual = truth.astype(bool)
    total = max(1, len(truth))
    return {
        "multi_threshold": multi,
        "single_threshold": single,
        "decided_multi": round(float(high.sum()) / total, 4),
        "decided_single": round(float(low.sum()) / total, 4),
        "uncertain": round(float(middle.sum()) / total, 4),
        "decided_accuracy": round(
            _ratio(float((high & actual).sum() + (low & ~actual).sum()), float((high | low).sum())), 4
        ),
        "multi_recall_by_classifier": round(_ratio(float((high & actual).sum()), float(actual.sum())), 4),
    }

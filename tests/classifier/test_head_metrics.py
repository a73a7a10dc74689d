"""The classifier's metrics and numpy head: hand-checked numbers, learning, early stopping on validation F1."""

from __future__ import annotations

import numpy as np
import pytest

from multihop_classifier.model.head import HeadConfig, train_head
from multihop_classifier.runs.metrics import (
    binary_metrics,
    f1_at,
    roc_auc,
    roc_curve,
    router_bands,
    threshold_for_recall,
)

TRUTH = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=float)
PROBABILITY = np.array([0.9, 0.8, 0.6, 0.3, 0.7, 0.2, 0.1, 0.05])


def test_metrics_match_a_hand_count() -> None:
    """At 0.5: TP 3, FN 1, FP 1, TN 3 -> accuracy/precision/recall/F1 0.75; AUC 14/16 by pair count."""
    metrics = binary_metrics(TRUTH, PROBABILITY, 0.5)
    assert metrics.confusion == [[3, 1], [1, 3]]
    assert (metrics.accuracy, metrics.precision, metrics.recall, metrics.f1) == (0.75, 0.75, 0.75, 0.75)
    assert metrics.auc == pytest.approx(14 / 16, abs=1e-4)


def test_auc_counts_ties_half_and_is_undefined_for_one_class() -> None:
    """Equal scores count half a pair; with only one class present there is no AUC."""
    assert roc_auc(np.array([1.0, 0.0]), np.array([0.5, 0.5])) == 0.5
    assert roc_auc(np.array([1.0, 1.0]), np.array([0.2, 0.9])) is None
    assert binary_metrics(np.array([1.0, 1.0]), np.array([0.2, 0.9])).auc is None


def test_the_roc_curve_runs_from_nothing_to_everything() -> None:
    """The curve starts at (0, 0) and ends at (1, 1) with rates never decreasing."""
    fpr, tpr, _ = roc_curve(TRUTH, PROBABILITY)
    assert (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)


def test_the_threshold_is_lowered_only_as_far_as_the_recall_target_needs() -> None:
    """Recall 0.75 at 0.5 misses a 0.85 target: the threshold drops to 0.3 (recall 1.0); 0.5 stays when enough."""
    assert threshold_for_recall(TRUTH, PROBABILITY, target=0.85) == 0.3
    assert threshold_for_recall(TRUTH, PROBABILITY, target=0.7) == 0.5


def test_router_bands_split_confident_and_uncertain_answers() -> None:
    """>= 0.8 and <= 0.2 are decided (here 5 of 8, all right), the rest go to the model vote."""
    bands = router_bands(TRUTH, PROBABILITY)
    assert (bands["decided_multi"], bands["decided_single"], bands["uncertain"]) == (0.25, 0.375, 0.375)
    assert bands["decided_accuracy"] == 1.0 and bands["multi_recall_by_classifier"] == 0.5


def _two_clusters(seed: int, size: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, size).astype(float)
    points = rng.normal(0.0, 1.0, (size, 6)) + labels[:, None] * 3.0
    return points, labels


@pytest.mark.parametrize("hidden", [0, 16])
def test_the_head_learns_a_separable_problem_and_is_seeded(hidden: int) -> None:
    """Logistic (hidden=0) and MLP heads reach validation F1 > 0.9 on two clusters; the same seed gives the same weights."""
    x, y = _two_clusters(1)
    xv, yv = _two_clusters(2)
    config = HeadConfig(hidden=hidden, epochs=5, seed=3)
    trained = train_head(x, y, xv, yv, config=config, validation_f1=f1_at)
    assert f1_at(yv, trained.head.probabilities(xv)) > 0.9
    again = train_head(x, y, xv, yv, config=config, validation_f1=f1_at)
    assert all(np.array_equal(again.head.weights[k], v) for k, v in trained.head.weights.items())


def test_training_stops_early_and_keeps_the_best_validation_epoch() -> None:
    """Validation F1 falling after epoch 1 stops training after `patience` more epochs, with epoch 1's weights."""
    x, y = _two_clusters(1)
    scores = iter([0.9, 0.8, 0.7, 0.95, 0.99])
    seen: list[np.ndarray] = []

    def scripted_f1(truth: np.ndarray, probability: np.ndarray) -> float:
        seen.append(probability.copy())
        return next(scores)

    trained = train_head(x, y, x, y, config=HeadConfig(epochs=5, patience=2), validation_f1=scripted_f1)
    assert [r.epoch for r in trained.history] == [1, 2, 3] and trained.stopped == "early_stopping"
    assert trained.best_epoch == 1 and [r.validation_f1 for r in trained.history] == [0.9, 0.8, 0.7]
    assert np.allclose(trained.head.probabilities(x), seen[0])

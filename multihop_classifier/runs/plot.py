"""The ROC curve and the precision/recall/F1-by-threshold plot of an evaluation, as one PNG (matplotlib)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from multihop_classifier.runs.metrics import binary_metrics, roc_auc, roc_curve


def write_plot(
    path: Path, truth: np.ndarray, probability: np.ndarray, *, threshold: float, title: str
) -> str | None:
    """Write the two-panel PNG; returns its path, or None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return None
    fpr, tpr, _ = roc_curve(truth, probability)
    grid = np.linspace(0.0, 1.0, 101)
    curves = [binary_metrics(truth, probability, float(t)) for t in grid]
    figure, (roc, by_threshold) = pyplot.subplots(1, 2, figsize=(11, 4.5), dpi=100)
    auc = roc_auc(truth, probability)
    roc.plot(fpr, tpr, color="tab:blue", label="AUC n/a (one class)" if auc is None else f"AUC {auc:.3f}")
    roc.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    roc.set(xlabel="false-positive rate", ylabel="true-positive rate (multi-hop recall)", title="ROC")
    roc.legend(loc="lower right")
    for name, color in (("precision", "tab:green"), ("recall", "tab:red"), ("f1", "tab:purple")):
        by_threshold.plot(grid, [getattr(m, name) for m in curves], label=name, color=color)
    by_threshold.axvline(
        threshold, color="black", linestyle="--", linewidth=1, label=f"operating {threshold:.2f}"
    )
    for band in (0.2, 0.8):
        by_threshold.axvline(band, color="grey", linestyle=":", linewidth=1)
    by_threshold.axhline(0.85, color="tab:red", linestyle=":", linewidth=0.8)
    by_threshold.set(xlabel="threshold on P(multi-hop) (router bands at 0.2 / 0.8)", ylim=(0, 1.02))
    by_threshold.set_title("precision / recall / F1 by threshold")
    by_threshold.legend(loc="lower center")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
    return str(path)

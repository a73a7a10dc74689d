"""``eval``: score a trained model on its held-back test split (or any JSONL), print the table, save JSON and a plot."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from multihop_classifier.data.examples import Example, read_examples
from multihop_classifier.model.classifier import ClassifierModel
from multihop_classifier.runs.metrics import Metrics, binary_metrics, router_bands, threshold_for_recall
from multihop_classifier.runs.plot import write_plot

METRICS_FILE = "metrics.json"
PLOT_FILE = "roc.png"


def _breakdown(
    examples: Sequence[Example], probability: np.ndarray, truth: np.ndarray, threshold: float, field: str
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[int]] = {}
    for index, example in enumerate(examples):
        groups.setdefault(getattr(example, field) or "unknown", []).append(index)
    result = {}
    for name, rows in sorted(groups.items()):
        picked = np.array(rows)
        metrics = binary_metrics(truth[picked], probability[picked], threshold)
        result[name] = {"count": len(rows), "accuracy": metrics.accuracy, "recall": metrics.recall}
    return result


def evaluate_examples(model: ClassifierModel, examples: Sequence[Example], *, name: str) -> dict[str, Any]:
    """Metrics at the model's threshold and at 0.5, router bands and per-source/language breakdowns."""
    model.encoder.encode(["warm up"])  # loading the encoder is not part of the per-question time
    started = time.perf_counter()
    predictions = model.predict([e.question for e in examples], [e.features for e in examples])
    seconds = time.perf_counter() - started
    probability = np.array([p.probability for p in predictions])
    truth = np.array([1.0 if e.is_multi else 0.0 for e in examples])
    operating = binary_metrics(truth, probability, model.threshold)
    default = binary_metrics(truth, probability, 0.5)
    target = float(model.meta.get("recall_target", 0.85))
    reaching = binary_metrics(truth, probability, threshold_for_recall(truth, probability, target=target))
    return {
        "model_version": model.version,
        "encoder": model.encoder.name,
        "data": name,
        "count": len(examples),
        "labels": dict(Counter(e.label for e in examples)),
        "metrics": operating.to_dict(),
        "metrics_at_0_5": default.to_dict(),
        "recall_target": target,
        "recall_target_met": operating.recall >= target,
        "precision_cost": round(default.precision - operating.precision, 4),
        "at_recall_target_here": {
            "threshold": reaching.threshold,
            "precision": reaching.precision,
            "recall": reaching.recall,
            "precision_cost_vs_0_5": round(default.precision - reaching.precision, 4),
        },
        "router_bands": router_bands(truth, probability),
        "by_source": _breakdown(examples, probability, truth, model.threshold, "source"),
        "by_lang": _breakdown(examples, probability, truth, model.threshold, "lang"),
        "truncated": sum(p.truncated for p in predictions),
        "ms_per_question": round(1000 * seconds / max(1, len(examples)), 3),
        "_curve": (truth, probability),
    }


def _row(label: str, metrics: Metrics) -> str:
    return (
        f"{label:<12}{metrics.accuracy:>9.4f}{metrics.precision:>11.4f}{metrics.recall:>8.4f}"
        f"{metrics.f1:>8.4f}{'n/a' if metrics.auc is None else format(metrics.auc, '.4f'):>8}"
    )


def _reaching_line(report: dict[str, Any]) -> str:
    here = report["at_recall_target_here"]
    if not report["labels"].get("multi") or not report["labels"].get("single"):
        return "one class only: precision and AUC are not meaningful on this data"
    return (
        f"threshold that reaches recall {report['recall_target']} on this data: {here['threshold']:.4f} "
        f"(recall {here['recall']:.4f}, precision {here['precision']:.4f}; cost vs 0.5: "
        f"{here['precision_cost_vs_0_5']:+.4f})"
    )


def format_report(report: dict[str, Any]) -> str:
    """The printed metrics table: both thresholds, the confusion matrix, the router bands and the target."""
    operating = Metrics(**report["metrics"])
    default = Metrics(**report["metrics_at_0_5"])
    labels = report["labels"]
    (tn, fp), (fn, tp) = operating.confusion
    bands = report["router_bands"]
    lines = [
        f"multi-hop classifier {report['model_version']} ({report['encoder']}) on {report['data']}: "
        f"{report['count']} questions ({labels.get('multi', 0)} multi, {labels.get('single', 0)} single)",
        f"{'threshold':<12}{'accuracy':>9}{'precision':>11}{'recall':>8}{'f1':>8}{'auc':>8}",
        _row(f"{operating.threshold:.4f} op", operating),
    ]
    if operating.threshold != default.threshold:
        lines.append(_row("0.5000", default))
    lines += [
        f"confusion at {operating.threshold:.4f} (rows = truth)   pred single  pred multi",
        f"  single{tn:>39}{fp:>12}",
        f"  multi{fn:>40}{tp:>12}",
        f"recall target {report['recall_target']}: {'met' if report['recall_target_met'] else 'NOT met'} "
        f"(recall {operating.recall:.4f}, precision {operating.precision:.4f}; precision cost vs 0.5: "
        f"{report['precision_cost']:+.4f})",
        _reaching_line(report),
        f"router bands (>= {bands['multi_threshold']} multi, <= {bands['single_threshold']} single): "
        f"{bands['decided_multi'] + bands['decided_single']:.1%} decided by the classifier (accuracy "
        f"{bands['decided_accuracy']:.1%}), {bands['uncertain']:.1%} uncertain -> model vote; multi recall "
        f"by the classifier tier alone {bands['multi_recall_by_classifier']:.1%}",
    ]
    for field in ("by_source", "by_lang"):
        if len(report[field]) > 1:
            parts = [f"{k} {v['count']}: acc {v['accuracy']:.3f}" for k, v in report[field].items()]
            lines.append(f"{field.replace('_', ' ')}: " + "; ".join(parts))
    lines.append(f"{report['ms_per_question']} ms per question; {report['truncated']} cut to max tokens")
    return "\n".join(lines)


def evaluate(
    model: ClassifierModel,
    data: Path,
    *,
    out: Path,
    held_back: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Evaluate on a JSONL file; print the table; write metrics.json and roc.png into ``out``.

    ``held_back`` marks the run's own test split: only such metrics are exported with the model.
    """
    examples = read_examples(data)
    report = evaluate_examples(model, examples, name=str(data))
    report["held_back_test_split"] = held_back
    truth, probability = report.pop("_curve")
    out.mkdir(parents=True, exist_ok=True)
    report["plot"] = write_plot(
        out / PLOT_FILE, truth, probability, threshold=model.threshold, title=model.version
    )
    (out / METRICS_FILE).write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", "utf-8")
    log(format_report(report))
    log(f"metrics: {out / METRICS_FILE}; plot: {report['plot'] or 'not written (matplotlib missing)'}")
    return report

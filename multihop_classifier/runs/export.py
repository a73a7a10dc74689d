"""``export``: copy an evaluated run into ``<out>/<model_version>/`` (model, metrics, plot) and point LATEST at it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from multihop_classifier.model.classifier import HEAD_FILE, MODEL_FILE, read_meta
from multihop_classifier.runs.evaluation import METRICS_FILE, PLOT_FILE
from multihop_classifier.runs.training import TRAINING_FILE


class ExportError(RuntimeError):
    """A run that cannot be exported, or a version directory that already holds other weights."""


def export_model(run: Path, out: Path) -> Path:
    """The versioned directory written (or already there with the same weights); LATEST names it."""
    version = str(read_meta(run)["model_version"])
    if not (run / METRICS_FILE).is_file():
        raise ExportError(f"{run} has no {METRICS_FILE}: run eval on it before exporting")
    metrics = json.loads((run / METRICS_FILE).read_text("utf-8"))
    if metrics.get("model_version") != version:
        raise ExportError(f"{run / METRICS_FILE} belongs to another model: run eval again")
    if metrics.get("held_back_test_split") is not True:
        raise ExportError(
            f"{run / METRICS_FILE} is not from the run's held-back test split: run eval --model {run}"
        )
    target = out / version
    if target.exists():
        if (target / HEAD_FILE).read_bytes() != (run / HEAD_FILE).read_bytes():
            raise ExportError(f"{target} exists with other weights; not overwritten")
    else:
        staging = out / f".{version}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in (MODEL_FILE, HEAD_FILE, METRICS_FILE, PLOT_FILE, TRAINING_FILE):
            if (run / name).is_file():
                shutil.copy2(run / name, staging / name)
        staging.rename(target)
    (out / "LATEST").write_text(version + "\n", "utf-8")
    return target

"""train / eval / export through the classifier's command line and `kb classifier`: files, table, versions, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bot.cli import main as kb_main
from multihop_classifier.cli import main as classifier_main
from multihop_classifier.data.examples import read_examples
from multihop_classifier.model.classifier import load_model

METRIC_KEYS = {"accuracy", "precision", "recall", "f1", "auc", "confusion", "threshold", "count"}


def test_a_run_holds_the_model_its_8_1_1_splits_and_its_training_record(
    tiny_model: tuple[Path, Path],
) -> None:
    """400 examples are split 320/40/40 (balanced); at most 5 epochs ran and the best validation epoch is kept."""
    run, _ = tiny_model
    sizes = {
        name: len(read_examples(run / "splits" / f"{name}.jsonl")) for name in ("train", "validation", "test")
    }
    assert sizes == {"train": 320, "validation": 40, "test": 40}
    training = json.loads((run / "training.json").read_text("utf-8"))
    assert 1 <= len(training["history"]) <= 5 and training["best_epoch"] in [
        r["epoch"] for r in training["history"]
    ]
    assert training["stopped"] in ("max_epochs", "early_stopping") and training["seed"] == 13
    meta = json.loads((run / "model.json").read_text("utf-8"))
    assert (
        meta["max_tokens"] == 128
        and meta["encoder"]["kind"] == "use"
        and meta["model_version"].startswith("mhc-use-")
    )


def test_eval_writes_metrics_json_and_a_roc_png_for_the_test_split(tiny_model: tuple[Path, Path]) -> None:
    """metrics.json holds accuracy, precision, recall, F1, AUC and the confusion matrix; roc.png is a PNG image."""
    run, _ = tiny_model
    report = json.loads((run / "metrics.json").read_text("utf-8"))
    assert set(report["metrics"]) == METRIC_KEYS and report["count"] == 40
    assert sum(map(sum, report["metrics"]["confusion"])) == 40
    assert report["data"].endswith("test.jsonl") and "router_bands" in report
    assert (run / "roc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_prints_the_metrics_table_or_json(
    tiny_model: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The printed table has the metric columns, the confusion matrix and the recall target; --json prints JSON."""
    run, _ = tiny_model
    assert classifier_main(["eval", "--model", str(run), "--out", str(tmp_path / "a")]) == 0
    table = capsys.readouterr().out
    for part in (
        "accuracy",
        "precision",
        "recall",
        "f1",
        "auc",
        "confusion at",
        "recall target 0.85",
        "router bands",
    ):
        assert part in table
    assert classifier_main(["eval", "--model", str(run), "--out", str(tmp_path / "b"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["count"] == 40


def test_the_export_is_named_by_model_version_and_predicts_like_the_run(
    tiny_model: tuple[Path, Path],
) -> None:
    """models/<model_version>/ holds model, metrics and plot; LATEST names it; its answers equal the run's."""
    run, models = tiny_model
    version = (models / "LATEST").read_text("utf-8").strip()
    exported = models / version
    assert {p.name for p in exported.iterdir()} >= {
        "model.json",
        "head.npz",
        "metrics.json",
        "roc.png",
        "training.json",
    }
    assert json.loads((exported / "metrics.json").read_text("utf-8"))["model_version"] == version
    questions = ["北京和上海哪个大？", "What is BM25?"]
    ours = [p.probability for p in load_model(models).predict(questions)]
    assert ours == [p.probability for p in load_model(run).predict(questions)]


def test_training_is_seeded_and_export_needs_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One seed gives identical weights and version; export needs eval of the held-back split, not of other data."""
    data = tmp_path / "seed.jsonl"
    assert classifier_main(["generate", "--out", str(data), "--count", "120"]) == 0
    for name in ("a", "b"):
        assert (
            classifier_main(["train", "--data", str(data), "--out", str(tmp_path / name), "--hidden", "0"])
            == 0
        )
    with np.load(tmp_path / "a" / "head.npz") as a, np.load(tmp_path / "b" / "head.npz") as b:
        assert all(np.array_equal(a[key], b[key]) for key in a.files)
    assert load_model(tmp_path / "a").version == load_model(tmp_path / "b").version
    capsys.readouterr()
    assert classifier_main(["export", "--run", str(tmp_path / "a"), "--out", str(tmp_path / "models")]) == 2
    assert "run eval on it before exporting" in capsys.readouterr().err
    other = tmp_path / "other.jsonl"
    other.write_bytes((tmp_path / "a" / "splits" / "validation.jsonl").read_bytes())
    assert (
        classifier_main(
            ["eval", "--model", str(tmp_path / "a"), "--data", str(other), "--out", str(tmp_path / "a")]
        )
        == 0
    )
    assert classifier_main(["export", "--run", str(tmp_path / "a"), "--out", str(tmp_path / "models")]) == 2
    assert "not from the run's held-back test split" in capsys.readouterr().err
    assert classifier_main(["eval", "--model", str(tmp_path / "a"), "--data", str(other)]) == 0
    assert (tmp_path / "a" / "eval-other" / "metrics.json").is_file()
    assert classifier_main(["eval", "--model", str(tmp_path / "a")]) == 0
    for _ in range(2):  # exporting the same weights again is a no-op, not an error
        assert (
            classifier_main(["export", "--run", str(tmp_path / "a"), "--out", str(tmp_path / "models")]) == 0
        )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"question": "q", "label": "multihop"}\n', "seed.jsonl:1: 'label' must be 'single' or 'multi'"),
        ('{"question": "q", "label": "multi"}\n', "at least 10 'single' examples"),
    ],
)
def test_bad_training_data_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: str, message: str
) -> None:
    """Bad or too little data ends train with exit 2 and one line naming the problem, no traceback."""
    data = tmp_path / "seed.jsonl"
    data.write_text(lines, "utf-8")
    assert classifier_main(["train", "--data", str(data), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not (tmp_path / "run" / "model.json").exists()


def test_predict_prints_one_json_line_per_question(
    tiny_model: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`predict` classifies questions locally with an exported model, one JSON object a line."""
    assert (
        classifier_main(["predict", "--model-dir", str(tiny_model[1]), "北京和上海哪个大？", "What is BM25?"])
        == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["label"] for line in lines] == ["multi", "single"] and lines[0][
        "question"
    ] == "北京和上海哪个大？"


def test_kb_classifier_offers_the_same_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kb classifier generate` writes data like the package's own CLI; `kb classifier` alone prints its help."""
    out = tmp_path / "kb.jsonl"
    assert kb_main(["classifier", "generate", "--out", str(out), "--count", "20"]) == 0
    assert len(read_examples(out)) == 20
    assert kb_main(["classifier"]) == 2
    assert "serve" in capsys.readouterr().out

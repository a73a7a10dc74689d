"""The BERT path: a tiny randomly initialised BERT built in the test is trained on, exported and served.

Runs where torch and transformers are installed (``pip install torch==2.13.0 transformers``); the CI
installs ``.[test]`` only, so there it is skipped with that reason. No weights are downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from multihop_classifier.cli import main as classifier_main
from multihop_classifier.data.examples import read_examples
from multihop_classifier.model.bert import bert_available
from tests.classifier.support import running_service

pytestmark = pytest.mark.skipif(
    not bert_available(), reason="torch/transformers not installed (pip install torch==2.13.0 transformers)"
)


def build_tiny_bert(directory: Path, texts: list[str]) -> Path:
    """A 2-layer, 32-wide BERT with a vocabulary of the texts' characters and words, saved like a real one."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = sorted({token for text in texts for token in text.lower().replace("?", " ").split()})
    chars = sorted({char for text in texts for char in text if not char.isascii()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(words + chars)]
    directory.mkdir(parents=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", "utf-8")
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
    )
    BertModel(config).save_pretrained(directory)
    BertTokenizerFast(vocab_file=str(directory / "vocab.txt")).save_pretrained(directory)
    return directory


async def test_a_local_bert_backbone_trains_exports_and_serves(tmp_path: Path) -> None:
    """--encoder bert with a local directory: train, eval, export, then /health names it and /predict answers."""
    data = tmp_path / "seed.jsonl"
    assert classifier_main(["generate", "--out", str(data), "--count", "160"]) == 0
    bert = build_tiny_bert(tmp_path / "tiny-bert", [e.question for e in read_examples(data)])
    run, models = tmp_path / "run", tmp_path / "models"
    train = [
        "train",
        "--data",
        str(data),
        "--out",
        str(run),
        "--encoder",
        "bert",
        "--encoder-path",
        str(bert),
    ]
    assert classifier_main(train) == 0
    assert classifier_main(["eval", "--model", str(run)]) == 0
    assert classifier_main(["export", "--run", str(run), "--out", str(models)]) == 0
    meta = json.loads((run / "model.json").read_text("utf-8"))
    assert meta["encoder"] == {"kind": "bert", "name": "bert:tiny-bert", "path": str(bert), "dimension": 32}
    assert not list(models.glob("*/*.safetensors")) and not list(models.glob("*/vocab.txt"))  # never copied
    async with running_service(models) as service:
        _, health = await service.call("GET", "/health")
        status, answer = await service.call("POST", "/predict", {"question": "北京和上海哪个大？"})
        _, long = await service.call("POST", "/predict", {"question": "北京 " * 200})
        _, batch = await service.call("POST", "/predict", [{"question": "What is BM25?"}] * 3)
    assert health["ready"] is True and health["encoder"] == "bert:tiny-bert"
    assert (
        status == 200
        and answer["model_version"] == meta["model_version"]
        and 0 <= answer["multi_hop_probability"] <= 1
    )
    assert long["truncated"] is True and long["tokens"] > 128
    assert len(batch) == 3 and len({a["multi_hop_probability"] for a in batch}) == 1


async def test_a_bert_model_reads_its_backbone_from_a_new_mount_point(tmp_path: Path) -> None:
    """When the backbone moves, --encoder-path points the service at the new mount; without it, not ready."""
    data = tmp_path / "seed.jsonl"
    assert classifier_main(["generate", "--out", str(data), "--count", "60"]) == 0
    bert = build_tiny_bert(tmp_path / "mnt-a" / "tiny-bert", [e.question for e in read_examples(data)])
    run = tmp_path / "run"
    assert (
        classifier_main(
            [
                "train",
                "--data",
                str(data),
                "--out",
                str(run),
                "--encoder",
                "bert",
                "--encoder-path",
                str(bert),
            ]
        )
        == 0
    )
    moved = bert.rename(tmp_path / "tiny-bert-moved")
    async with running_service(run) as service:
        _, gone = await service.call("GET", "/health")
    async with running_service(run, encoder_path=moved) as service:
        _, found = await service.call("GET", "/health")
    assert gone["ready"] is False and "no BERT model directory" in gone["reason"]
    assert found["ready"] is True

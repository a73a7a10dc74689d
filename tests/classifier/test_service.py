"""The service tests through HTTP against the real service: /health, /predict, model missing, too long, batch.

See docs/design.md#the-classifier-service.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from core.retrieval.complexity import FEATURE_NAMES, extract_features
from multihop_classifier.model.classifier import MODEL_FILE, resolve_model_dir
from tests.classifier.support import Service, running_service

ROOT = Path(__file__).resolve().parents[2]
MULTI = "Which was founded earlier, Stanford University or the World Bank?"
SINGLE = "年假一共有几天？"


async def test_health_reports_ready_with_model_version_and_encoder(tiny_model: tuple[Path, Path]) -> None:
    """A loaded model makes /health 200 with ready, the exported model_version and the encoder's name."""
    _, models = tiny_model
    version = (models / "LATEST").read_text("utf-8").strip()
    async with running_service(models) as service:
        status, body = await service.call("GET", "/health")
    assert status == 200
    assert body["ready"] is True and body["model_version"] == version
    assert body["encoder"] == "use-multilingual-v3" and body["max_tokens"] == 128


async def test_predict_returns_label_probability_version_and_computed_features(
    tiny_model: tuple[Path, Path],
) -> None:
    """/predict with only a question computes the five rule features and labels multi and single questions."""
    _, models = tiny_model
    async with running_service(models) as service:
        _, multi = await service.call("POST", "/predict", {"question": MULTI})
        _, single = await service.call("POST", "/predict", {"question": SINGLE})
    assert multi["label"] == "multi" and multi["multi_hop_probability"] >= 0.8
    assert single["label"] == "single" and single["multi_hop_probability"] <= 0.2
    assert multi["model_version"] == (models / "LATEST").read_text("utf-8").strip()
    assert multi["features"] == extract_features(MULTI).as_dict() and multi["features_source"] == "computed"
    assert list(multi["features"]) == list(FEATURE_NAMES) and multi["truncated"] is False


async def test_features_sent_by_the_router_are_used_as_given(tiny_model: tuple[Path, Path]) -> None:
    """Features in the request are echoed and change the probability (they are model input, not decoration)."""
    _, models = tiny_model
    question = "Who leads the team that approves annual leave?"
    computed = extract_features(question).as_dict()
    heavy = {
        "comparison_markers": 6,
        "logical_connectors": 6,
        "entities": 8,
        "bridge_entities": 6,
        "tokens": 120,
    }
    async with running_service(models) as service:
        _, as_computed = await service.call("POST", "/predict", {"question": question, "features": computed})
        _, given = await service.call("POST", "/predict", {"question": question, "features": heavy})
    assert as_computed["features_source"] == "request" and given["features"] == {
        k: float(v) for k, v in heavy.items()
    }
    assert given["multi_hop_probability"] != as_computed["multi_hop_probability"]


async def test_input_over_128_tokens_is_truncated_and_says_so(tiny_model: tuple[Path, Path]) -> None:
    """A question over 128 encoder tokens is cut before encoding; the answer says so and how long it was."""
    _, models = tiny_model
    long_question = "请问公司规定的年假有几天，" * 30 + "谢谢？"
    async with running_service(models) as service:
        status, body = await service.call("POST", "/predict", {"question": long_question})
        _, short = await service.call("POST", "/predict", {"question": SINGLE})
    assert status == 200 and body["truncated"] is True and body["tokens"] > 128 == body["max_tokens"]
    assert "only the first 128" in body["notice"] and body["label"] in ("single", "multi")
    assert (
        body["features"]["tokens"] == extract_features(long_question).tokens
    )  # rules see the whole question
    assert short["truncated"] is False and "notice" not in short


async def test_a_batch_of_32_answers_in_order_and_matches_single_calls(tiny_model: tuple[Path, Path]) -> None:
    """A JSON list is one batch: 32 answers in request order, each equal to the same question asked alone."""
    _, models = tiny_model
    questions = [MULTI, SINGLE, "北京和上海哪个大？", "What is BM25?"] * 8
    async with running_service(models) as service:
        status, batch = await service.call("POST", "/predict", [{"question": q} for q in questions])
        alone = [(await service.call("POST", "/predict", {"question": q}))[1] for q in questions[:4]]
    assert status == 200 and isinstance(batch, list) and len(batch) == 32
    for index, answer in enumerate(batch):
        expected = alone[index % 4]
        assert answer["label"] == expected["label"]
        assert answer["multi_hop_probability"] == pytest.approx(expected["multi_hop_probability"], abs=1e-5)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"question": ""}, "'question' is empty"),
        ({"question": "   "}, "'question' is empty"),
        ({"question": 42}, "'question' must be a string, got a int"),
        ({"text": "hello"}, "'question' must be a string, got missing"),
        ("just a string", "each request must be a JSON object"),
        ([], "the batch is empty"),
        ({"question": "q", "features": {"tokens": 3}}, "'features': missing comparison_markers"),
        ({"question": "q", "features": [1, 2, 3, 4, -1]}, "must be finite and >= 0"),
        ({"question": "q", "features": {**dict.fromkeys(FEATURE_NAMES, 1), "x": 1}}, "unknown x"),
    ],
)
async def test_bad_requests_get_400_with_a_reason(
    tiny_model: tuple[Path, Path], body: Any, reason: str
) -> None:
    """An empty or non-string question, bad features or an empty batch is a 400 that says what is wrong."""
    async with running_service(tiny_model[1]) as service:
        status, answer = await service.call("POST", "/predict", body)
    assert status == 400 and answer["error"] == "invalid_request" and reason in answer["reason"]


async def test_a_bad_item_in_a_batch_names_its_index_and_bodies_must_be_json(
    tiny_model: tuple[Path, Path],
) -> None:
    """One bad item fails the batch with its index; a body that is not JSON is a 400; oversize batch/question/body 413."""
    async with running_service(tiny_model[1], max_batch=4) as service:
        status, answer = await service.call("POST", "/predict", [{"question": "ok"}, {"question": None}])
        raw_status, raw = await service.call("POST", "/predict", raw="question=hello")
        big_status, big = await service.call("POST", "/predict", [{"question": "q"}] * 5)
        huge_status, huge = await service.call("POST", "/predict", {"question": "年假" * 15_000})
        body_status, body = await service.call("POST", "/predict", {"question": "x", "pad": "y" * 600_000})
    assert (status, answer["index"]) == (400, 1)
    assert raw_status == 400 and "must be JSON" in raw["reason"]
    assert big_status == 413 and "at most 4" in big["reason"]
    assert huge_status == 413 and "30000 characters" in huge["reason"]
    assert body_status == 413 and "body is over" in body["reason"]


async def test_without_a_model_health_is_not_ready_and_predict_is_503(tmp_path: Path) -> None:
    """An empty model folder: /health 503 ready=false with the reason, /predict 503 (validation still 400)."""
    async with running_service(tmp_path / "models") as service:
        health_status, health = await service.call("GET", "/health")
        status, answer = await service.call("POST", "/predict", {"question": MULTI})
        bad_status, _ = await service.call("POST", "/predict", {"question": ""})
    assert health_status == 503 and health["ready"] is False and health["status"] == "missing"
    assert "no model at" in health["reason"] and health["model_version"] is None
    assert status == 503 and answer["error"] == "model_not_ready" and "no model at" in answer["reason"]
    assert bad_status == 400


@pytest.mark.parametrize("damage", ["garbage json", "other features", "bert backbone gone"])
async def test_a_damaged_model_is_reported_not_ready(
    tiny_model: tuple[Path, Path], tmp_path: Path, damage: str
) -> None:
    """Unreadable model.json, a model of other features, or a BERT model whose backbone is not mounted: not ready."""
    source = resolve_model_dir(tiny_model[1])
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "head.npz").write_bytes((source / "head.npz").read_bytes())
    meta = json.loads((source / MODEL_FILE).read_text("utf-8"))
    if damage == "other features":
        meta["feature_names"] = ["tokens"]
    if damage == "bert backbone gone":
        meta["encoder"] = {"kind": "bert", "path": str(tmp_path / "not-mounted")}
    text = "{not json" if damage == "garbage json" else json.dumps(meta)
    (broken / MODEL_FILE).write_text(text, "utf-8")
    async with running_service(broken) as service:
        status, health = await service.call("GET", "/health")
    assert status == 503 and health["ready"] is False and health["status"] == "missing"
    expected = {
        "garbage json": "not readable JSON",
        "other features": "other features",
        "bert backbone gone": "no BERT",
    }
    assert expected[damage] in health["reason"]


async def test_kb_classifier_serve_runs_the_service_on_the_given_port(tiny_model: tuple[Path, Path]) -> None:
    """`kb classifier serve --host --port --model-dir` in its own process answers /health and /predict."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [
        "classifier",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--model-dir",
        str(tiny_model[1]),
    ]
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        async with aiohttp.ClientSession() as session:
            service = Service(f"http://127.0.0.1:{port}", session)
            async with asyncio.timeout(60):
                while True:
                    try:
                        health = await service.wait_until_loaded()
                        break
                    except aiohttp.ClientConnectionError:
                        assert process.returncode is None, "the service exited"
                        await asyncio.sleep(0.1)
            status, answer = await service.call("POST", "/predict", {"question": MULTI})
    finally:
        process.send_signal(signal.SIGINT)
        output = (await asyncio.wait_for(process.communicate(), 30))[0].decode()
    assert health["ready"] is True and status == 200 and answer["label"] == "multi"
    assert f"http://127.0.0.1:{port}" in output and process.returncode == 0

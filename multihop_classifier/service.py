"""The HTTP service (aiohttp): ``POST /predict`` (one question or a list) and ``GET /health``.

The model loads in a worker thread after the server starts; until it is ready (or when there is no
usable model) ``/health`` answers 503 with ``ready: false`` and the reason, and ``/predict`` answers
503, so the bot's client falls back to its model vote. Requests are validated before anything else
(400 with a reason). Feature extraction and encoding run on one worker thread, never on the loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from multihop_classifier.data.features import FeatureError, parse_features
from multihop_classifier.model.classifier import ClassifierModel, ModelMissing, Prediction, load_model
from multihop_classifier.model.encoding import EncoderUnavailable

log = logging.getLogger(__name__)

DEFAULT_MAX_BATCH = 64
MAX_BODY_BYTES = 512 * 1024
# Far above what the encoder reads (128 tokens) and what the bot sends (KB_QUESTION_MAX_TOKENS); it bounds
# the rule-feature work (jieba) one request can ask for.
MAX_QUESTION_CHARS = 20_000


@dataclass(slots=True)
class ServiceState:
    """What the service has loaded: the model, or why it has none yet."""

    status: str = "loading"
    reason: str = "the model is loading"
    model: ClassifierModel | None = None


STATE = web.AppKey("state", ServiceState)
EXECUTOR = web.AppKey("executor", ThreadPoolExecutor)
MAX_BATCH = web.AppKey("max_batch", int)


class BadRequest(ValueError):
    """A request the service refuses with 400 (or 413 for a batch over the limit)."""

    def __init__(self, reason: str, *, index: int | None = None, status: int = 400) -> None:
        super().__init__(reason)
        self.reason, self.index, self.status = reason, index, status


def parse_item(item: Any, index: int | None = None) -> tuple[str, dict[str, float] | None]:
    """One request item's question and optional features; BadRequest says what is wrong."""
    if not isinstance(item, dict):
        raise BadRequest("each request must be a JSON object with a 'question'", index=index)
    question = item.get("question")
    if not isinstance(question, str):
        kind = "missing" if question is None else f"a {type(question).__name__}"
        raise BadRequest(f"'question' must be a string, got {kind}", index=index)
    if not question.strip():
        raise BadRequest("'question' is empty", index=index)
    if len(question) > MAX_QUESTION_CHARS:
        reason = f"'question' has {len(question)} characters; the service takes at most {MAX_QUESTION_CHARS}"
        raise BadRequest(reason, index=index, status=413)
    features = item.get("features")
    if features is None:
        return question, None
    try:
        return question, parse_features(features)
    except FeatureError as exc:
        raise BadRequest(str(exc), index=index) from exc


def parse_body(body: Any, max_batch: int) -> tuple[list[tuple[str, dict[str, float] | None]], bool]:
    """The items of a request body and whether it was a batch (a JSON list)."""
    if isinstance(body, list):
        if not body:
            raise BadRequest("the batch is empty")
        if len(body) > max_batch:
            raise BadRequest(f"a batch holds at most {max_batch} questions, got {len(body)}", status=413)
        return [parse_item(item, index) for index, item in enumerate(body)], True
    return [parse_item(body)], False


def prediction_body(prediction: Prediction, model: ClassifierModel) -> dict[str, Any]:
    """The JSON answer for one question."""
    max_tokens = model.encoder.max_tokens
    body: dict[str, Any] = {
        "label": prediction.label,
        "multi_hop_probability": prediction.probability,
        "model_version": model.version,
        "features": prediction.features,
        "features_source": prediction.features_source,
        "threshold": model.threshold,
        "tokens": prediction.tokens,
        "max_tokens": max_tokens,
        "truncated": prediction.truncated,
    }
    if prediction.truncated:
        body["notice"] = (
            f"the question has {prediction.tokens} tokens; only the first {max_tokens} were encoded "
            "(the rule features use the whole question)"
        )
    return body


def _error(status: int, error: str, reason: str, **extra: Any) -> web.Response:
    return web.json_response({"error": error, "reason": reason, **extra}, status=status)


async def predict(request: web.Request) -> web.Response:
    """POST /predict: {question, features?} -> one answer; a list of those -> a list of answers."""
    try:
        body = await request.json()
    except web.HTTPRequestEntityTooLarge:
        return _error(413, "invalid_request", f"the body is over {MAX_BODY_BYTES} bytes")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _error(400, "invalid_request", 'the body must be JSON: {"question": "..."} or a list')
    try:
        items, batch = parse_body(body, request.app[MAX_BATCH])
    except BadRequest as exc:
        extra = {} if exc.index is None else {"index": exc.index}
        return _error(exc.status, "invalid_request", exc.reason, **extra)
    state = request.app[STATE]
    model = state.model
    if model is None:
        return _error(503, "model_not_ready", state.reason, state=state.status)
    questions = [question for question, _ in items]
    features = [known for _, known in items]
    loop = asyncio.get_running_loop()
    try:
        predictions = await loop.run_in_executor(request.app[EXECUTOR], model.predict, questions, features)
    except Exception as exc:
        log.exception("prediction failed")
        return _error(500, "prediction_failed", f"{type(exc).__name__}: {exc}")
    answers = [prediction_body(prediction, model) for prediction in predictions]
    return web.json_response(answers if batch else answers[0])


async def health(request: web.Request) -> web.Response:
    """GET /health: 200 with the model version and encoder when ready, else 503 with the reason."""
    state = request.app[STATE]
    model = state.model
    if model is None:
        body = {"ready": False, "status": state.status, "reason": state.reason}
        return web.json_response({**body, "model_version": None, "encoder": None}, status=503)
    return web.json_response(
        {
            "ready": True,
            "status": "ready",
            "model_version": model.version,
            "encoder": model.encoder.name,
            "threshold": model.threshold,
            "max_tokens": model.encoder.max_tokens,
            "max_batch": request.app[MAX_BATCH],
            "trained_at": model.meta.get("trained_at"),
        }
    )


def _load_into(state: ServiceState, model_dir: Path | None, encoder_path: Path | None) -> None:
    if model_dir is None:
        state.status, state.reason = "missing", "no model directory was given"
        return
    try:
        state.model = load_model(model_dir, encoder_path=encoder_path)
    except (ModelMissing, EncoderUnavailable) as exc:
        state.status, state.reason = "missing", str(exc)
        log.warning("classifier model not loaded: %s", exc)
        return
    state.status, state.reason = "ready", ""
    log.info("classifier model %s ready (%s)", state.model.version, state.model.encoder.name)


def create_app(
    model_dir: Path | None,
    *,
    encoder_path: Path | None = None,
    max_batch: int = DEFAULT_MAX_BATCH,
) -> web.Application:
    """The service; the model at ``model_dir`` loads in the background once the server runs."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[STATE] = ServiceState()
    app[MAX_BATCH] = max_batch
    app.router.add_post("/predict", predict)
    app.router.add_get("/health", health)

    async def lifetime(app: web.Application) -> Any:
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="classifier")
        app[EXECUTOR] = executor
        loop = asyncio.get_running_loop()
        loading = loop.run_in_executor(executor, _load_into, app[STATE], model_dir, encoder_path)
        yield
        loading.cancel()
        executor.shutdown(wait=False, cancel_futures=True)

    app.cleanup_ctx.append(lifetime)
    return app


def serve(
    model_dir: Path | None,
    *,
    host: str = "127.0.0.1",
    port: int = 8600,
    encoder_path: Path | None = None,
    max_batch: int = DEFAULT_MAX_BATCH,
) -> int:
    """Run the service until interrupted."""
    app = create_app(model_dir, encoder_path=encoder_path, max_batch=max_batch)
    web.run_app(app, host=host, port=port, print=lambda line: print(line, flush=True))
    return 0

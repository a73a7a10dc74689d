"""map_model_errors: every client exception at the model boundary becomes its core error, from the original."""

from __future__ import annotations

import inspect

import aiohttp
import httpx2
import openai
import pytest
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from adapters.models.error_mapping import ERROR_MAP, RequestRejected, StreamInterrupted, map_model_errors
from core.errors import ModelError, ModelOutputInvalid, ModelRejected, ModelTruncated, ModelUnavailable

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
AIOHTTP_REQUEST = aiohttp.RequestInfo(
    URL("http://127.0.0.1:9/predict"), "POST", CIMultiDictProxy(CIMultiDict())
)


def status_error(status: int) -> openai.APIStatusError:
    response = httpx2.Response(status, request=REQUEST)
    classes = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        404: openai.NotFoundError,
        429: openai.RateLimitError,
        500: openai.InternalServerError,
    }
    return classes.get(status, openai.APIStatusError)(f"Error code: {status}", response=response, body=None)


def http_error(status: int) -> aiohttp.ClientResponseError:
    return aiohttp.ClientResponseError(AIOHTTP_REQUEST, (), status=status, message="scripted body")


def test_every_public_openai_exception_is_mapped_explicitly() -> None:
    """Each exception class the openai package exports has an explicit core error (like httpx's test)."""
    public = [getattr(openai, name) for name in openai.__all__]
    exported = {obj for obj in public if inspect.isclass(obj) and issubclass(obj, BaseException)}
    assert openai.RateLimitError in exported and openai.APITimeoutError in exported
    assert sorted(cls.__name__ for cls in exported - ERROR_MAP.keys()) == []
    assert all(issubclass(target, ModelError) for target in ERROR_MAP.values())


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (openai.APITimeoutError(REQUEST), ModelUnavailable),
        (openai.APIConnectionError(request=REQUEST), ModelUnavailable),
        (status_error(429), ModelUnavailable),
        (status_error(500), ModelUnavailable),
        (status_error(400), ModelRejected),
        (status_error(401), ModelRejected),
        (status_error(404), ModelRejected),
        (openai.APIResponseValidationError(httpx2.Response(200, request=REQUEST), None), ModelOutputInvalid),
        (StreamInterrupted("no data for 60 s"), ModelUnavailable),
        (http_error(503), ModelUnavailable),
        (http_error(404), RequestRejected),
        (aiohttp.ClientConnectionError("refused"), ModelUnavailable),
        (TimeoutError(), ModelUnavailable),
        (ValueError("Expecting value"), ModelOutputInvalid),
    ],
)
def test_client_exceptions_map_to_their_core_error_from_the_original(
    exc: BaseException, expected: type[ModelError]
) -> None:
    """Each exception maps to the core error of its nearest mapped class, with the call named in the detail
    and the original as its cause."""
    with pytest.raises(ModelError) as caught, map_model_errors("chat completion (m)"):
        raise exc
    assert type(caught.value) is expected
    assert str(caught.value).startswith("chat completion (m): ")
    assert caught.value.__cause__ is exc


def test_an_http_status_is_named_in_the_detail() -> None:
    """A 5xx from a small service is logged with its status and the body's start."""
    expected = pytest.raises(ModelUnavailable, match="HTTP 503 ClientResponseError: scripted body")
    with expected, map_model_errors("rerank"):
        raise http_error(503)


def test_core_errors_and_bugs_pass_through_unchanged() -> None:
    """A core error raised inside the block is not re-wrapped; an unrelated exception (a bug) propagates."""
    truncated = ModelTruncated("cut")
    with pytest.raises(ModelTruncated) as caught, map_model_errors("x"):
        raise truncated
    assert caught.value is truncated
    with pytest.raises(KeyError), map_model_errors("x"):
        raise KeyError("bug")


def test_length_finish_reason_error_maps_to_truncated() -> None:
    """The SDK's LengthFinishReasonError maps to ModelTruncated."""
    assert ERROR_MAP[openai.LengthFinishReasonError] is ModelTruncated


def test_a_refused_request_names_its_status_and_never_says_try_again_later() -> None:
    """401/404 are settings to fix: the message names the status and the settings, in both languages."""
    with pytest.raises(ModelRejected) as caught, map_model_errors("embeddings (e)"):
        raise status_error(401)
    assert caught.value.status == 401
    english, chinese = caught.value.message("en"), caught.value.message("zh")
    assert "HTTP 401" in english and "OPENAI_BASE_URL" in english and "try again" not in english
    assert "HTTP 401" in chinese and "稍后再试" not in chinese

"""The doctor's checks of the services the bot talks to: the model endpoint, Slack, the classifier service.

Each runs only when its part is configured (else it is skipped, not failed) and asks the cheapest thing that
proves the part works: the model endpoint lists its models, answers a two-token completion and is probed
for the JSON mode it accepts (json_schema, then json_object, else text, as adapters.models.openai_chat
falls back); Slack answers `auth.test` and the token's granted scopes (the `x-oauth-scopes` header) cover
manifest.yml's; the classifier answers `GET /health`. No retries: a doctor reports what it sees.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONObject, ResponseFormatJSONSchema

from adapters.models.chat_request import ChatRequest
from adapters.models.classifier_client import HttpComplexityClassifier
from adapters.models.error_mapping import describe
from adapters.models.openai_chat import rejects_response_format
from adapters.models.openai_client import PLACEHOLDER_API_KEY
from adapters.slack.app import build_web_client
from adapters.slack.manifest_scopes import BOT_SCOPES
from bot.doctor.report import Check
from bot.settings import Settings
from core.answering.prompts import PROBE_SCHEMA, probe_messages

PROBE_TIMEOUT = 15.0  # seconds a model request may take before the endpoint counts as not answering
_JSON_FORMATS: tuple[tuple[str, ResponseFormatJSONSchema | ResponseFormatJSONObject], ...] = (
    ("json_schema", {"type": "json_schema", "json_schema": {"name": "probe", "schema": PROBE_SCHEMA}}),
    ("json_object", {"type": "json_object"}),
)
_PROBE: list[ChatCompletionMessageParam] = ChatRequest(probe_messages(), 2, 0.0, "kb doctor").wire_messages(
    None
)


async def check_model(settings: Settings) -> list[Check]:
    """The endpoint lists the configured models, completes two tokens, and accepts which JSON mode."""
    model = settings.model
    why = model.extractive_reason
    if why is not None:
        if (model.base_url or model.api_key) and not model.forced_extractive:  # half configured: a mistake
            fix = "name the model, or unset OPENAI_BASE_URL / OPENAI_API_KEY to use the offline engine on purpose"
            return [Check.failed("model endpoint", f"{why}: answers use the offline extractive engine", fix)]
        return [Check.skipped("model endpoint", f"{why}: answers use the offline extractive engine")]
    base_url = model.base_url or "https://api.openai.com/v1"  # the SDK's own default for an API key alone
    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=model.api_key or PLACEHOLDER_API_KEY,
        timeout=min(model.timeout, PROBE_TIMEOUT),
        max_retries=0,
    )
    try:
        return await _probe(client, base_url, tuple(dict.fromkeys((model.chat_model, model.aux_model))))
    finally:
        await client.close()


async def _probe(client: openai.AsyncOpenAI, base_url: str, wanted: tuple[str, ...]) -> list[Check]:
    try:
        listed = [item.id async for item in client.models.list()]
    except Exception as error:
        fix = "start the model server or correct OPENAI_BASE_URL (unset it to answer with the offline engine)"
        return [Check.failed("model endpoint", f"{base_url}: {describe(error)}", fix)]
    checks = [Check.ok("model endpoint", f"{base_url}: answers, {len(listed)} model(s) listed")]
    absent = [name for name in wanted if name not in listed]
    if absent:
        fix = f"set KB_CHAT_MODEL / KB_AUX_MODEL to a listed model ({', '.join(listed[:5]) or 'none listed'})"
        checks.append(Check.failed("model names", f"{', '.join(absent)} not listed", fix))
    else:
        checks.append(Check.ok("model names", ", ".join(wanted) + " listed"))
    chat = wanted[0]
    try:
        reply = await client.chat.completions.create(
            model=chat,
            messages=_PROBE,
            max_tokens=2,
            temperature=0,
        )
    except Exception as error:
        fix = "check the model name and the server's log"
        return [*checks, Check.failed("completion", f"{chat}: {describe(error)}", fix)]
    if not reply.choices:
        return [*checks, Check.failed("completion", f"{chat}: a reply without choices", "check the server")]
    checks.append(Check.ok("completion", f"{chat} answers a two-token completion"))
    return [*checks, await _json_mode(client, chat)]


async def _json_mode(client: openai.AsyncOpenAI, chat: str) -> Check:
    """The first JSON mode the server accepts; text (the schema in the prompt) when it accepts neither."""
    for mode, response_format in _JSON_FORMATS:
        try:
            await client.chat.completions.create(
                model=chat,
                messages=_PROBE,
                max_tokens=16,
                temperature=0,
                response_format=response_format,
            )
        except Exception as error:
            if rejects_response_format(error):
                continue
            return Check.failed("json mode", f"{chat}: {describe(error)}", "check the server's log")
        return Check.ok("json mode", f"{chat} accepts {mode}")
    return Check.ok("json mode", f"{chat} accepts neither JSON mode: the schema goes into the prompt")


def _header(headers: Any, name: str) -> str:
    return next((str(value) for key, value in dict(headers or {}).items() if key.lower() == name), "")


async def check_slack(settings: Settings) -> list[Check]:
    """auth.test answers for SLACK_BOT_TOKEN, and the granted scopes cover manifest.yml's."""
    token = settings.slack.bot_token
    if not token:
        return [Check.skipped("slack", "SLACK_BOT_TOKEN is not set (the terminal commands need none)")]
    client = build_web_client(token, base_url=settings.slack.api_url, retries=0)
    try:
        response = await client.auth_test()
    except Exception as error:
        error_code = getattr(getattr(error, "response", None), "data", {}) or {}
        shown = error_code.get("error") if isinstance(error_code, dict) else None
        fix = "check SLACK_BOT_TOKEN (reinstall the app to get a new one) and SLACK_API_URL"
        return [Check.failed("slack", f"auth.test: {shown or type(error).__name__}", fix)]
    team, user = response.get("team", "?"), response.get("user", "?")
    checks = [Check.ok("slack", f"auth.test: {user} in {team}")]
    granted = {scope.strip() for scope in _header(response.headers, "x-oauth-scopes").split(",") if scope}
    if not granted:
        checks.append(Check.skipped("slack scopes", "Slack did not say which scopes the token has"))
        return checks
    missing = [scope for scope in BOT_SCOPES if scope not in granted]
    if missing:
        fix = "add them from manifest.yml to the app's bot scopes and reinstall it"
        checks.append(Check.failed("slack scopes", f"missing {', '.join(missing)}", fix))
    else:
        checks.append(Check.ok("slack scopes", f"all {len(BOT_SCOPES)} scopes of manifest.yml granted"))
    return checks


async def check_classifier(settings: Settings) -> list[Check]:
    """The multi-hop classifier service, when KB_CLASSIFIER_URL is set, answers GET /health."""
    url = settings.classifier.url
    if not url:
        return [
            Check.skipped("classifier", "KB_CLASSIFIER_URL is not set (routing uses rules and the model)")
        ]
    classifier = HttpComplexityClassifier(url, timeout=max(settings.classifier.timeout, 2.0))
    try:
        health = await classifier.health()
    except Exception as error:
        fix = "start it with `kb classifier serve`, or unset KB_CLASSIFIER_URL"
        return [Check.failed("classifier", f"{url}: {describe(error)}", fix)]
    finally:
        await classifier.aclose()
    version = health.get("model_version", "?")
    return [Check.ok("classifier", f"{url}: healthy (model {version})")]

"""A local mock of the Slack Web API (aiohttp), in the spirit of bolt-python's tests/mock_web_api_server.

It records every call, validates every message and view against Block Kit limits (violations are kept
in `violations` and answered with `invalid_blocks`; the test fixture fails on any), keeps the state of
posted messages and views, and misbehaves on request like the real service does under load: 429 with
Retry-After for chosen methods (a fixed number of times, for a span of time, or whenever a Tier-style
per-minute budget is exceeded), Slack's per-channel posting limit for chat.postMessage (about one per second
per channel with short bursts), and HTTP 500s; and it can hold a call's response (the call takes effect,
its answer never comes back: a process killed in that window).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

from adapters.slack.manifest_scopes import BOT_SCOPES
from tests.slack.block_kit_limits import (
    check_home_view,
    check_message,
    check_metadata,
    check_stream_call,
    check_view,
)
from tests.slack.mock_slack_methods import PostedMessage, SlackMethods

MESSAGE_METHODS = {"chat.postMessage", "chat.update", "chat.postEphemeral"}
VIEW_METHODS = {"views.open", "views.update", "views.push"}
STREAM_METHODS = {"chat.startStream", "chat.appendStream", "chat.stopStream"}


@dataclass
class ApiCall:
    """One request the mock received."""

    method: str
    params: dict[str, Any]
    at: float
    status: int = 200


def _decode(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


class MockSlackApi(SlackMethods):
    """The mock workspace: start() it, point AsyncWebClient(base_url=mock.url) at it."""

    def __init__(self, *, team_id: str = "T1", bot_user_id: str = "UBOT", bot_id: str = "BBOT") -> None:
        self.team_id, self.bot_user_id, self.bot_id = team_id, bot_user_id, bot_id
        self.calls: list[ApiCall] = []
        self.messages: dict[tuple[str, str], PostedMessage] = {}
        self.ephemerals: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []
        self.views: dict[str, dict[str, Any]] = {}
        self.home_views: dict[str, dict[str, Any]] = {}  # user -> the Home tab published for them
        self.suggested_prompts: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, thread_ts or "")
        self.thread_titles: dict[tuple[str, str], str] = {}
        self.violations: list[str] = []
        self.channels: dict[str, dict[str, Any]] = {}
        self.members: dict[str, list[str]] = {}
        self.user_names: dict[str, str] = {}
        self.admins: set[str] = set()  # users.info says is_admin for them
        self.failing: dict[str, str] = {}
        # The scopes auth.test reports in its x-oauth-scopes header, as Slack does (None: no header).
        self.granted_scopes: tuple[str, ...] | None = BOT_SCOPES
        self._refusals: dict[str, deque[str]] = {}
        self.members_page_size = 2
        self.replies_page_size = 100
        self.history: dict[str, list[dict[str, Any]]] = {}
        self.history_page_size = 100
        self._holds: Counter[str] = Counter()
        self.held: list[ApiCall] = []  # calls whose effect happened but whose response is withheld
        self._release = asyncio.Event()
        self.rate_limited: Counter[str] = Counter()
        self._forced_429: dict[str, deque[int]] = {}
        self._throttled_until: dict[str, tuple[float, int]] = {}
        self._forced_status: dict[str, deque[int]] = {}
        self._post_rate: tuple[float, float] | None = None  # (posts per second, burst) per channel
        self._post_buckets: dict[str, tuple[float, float]] = {}  # channel -> (tokens, at)
        self.server_errors: Counter[str] = Counter()
        self._tiers: dict[str, tuple[int, float]] = {}
        self._windows: dict[str, deque[float]] = {}
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.changed = asyncio.Event()
        self.socket_envelopes: list[dict[str, Any]] = []  # pushed to a Socket Mode client when it connects
        self.socket_acks: list[dict[str, Any]] = []

    # ---------- control
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self, name: str = "r") -> str:
        return f"http://127.0.0.1:{self.port}/respond/{name}"

    def add_channel(
        self,
        channel_id: str,
        *,
        members: list[str],
        is_im: bool = False,
        user: str = "",
        name: str = "",
        is_private: bool = False,
    ) -> None:
        """Make conversations.info / conversations.members (and .history) know a channel."""
        self.channels[channel_id] = {
            "id": channel_id,
            "is_im": is_im,
            "user": user,
            "is_archived": False,
            "name": name or channel_id.lower(),
            "is_private": is_private,
        }
        self.members[channel_id] = list(members)

    def throttle(self, method: str, *, times: int = 1, retry_after: int = 1) -> None:
        """The next `times` calls of method get 429 with this Retry-After."""
        self._forced_429.setdefault(method, deque()).extend([retry_after] * times)

    def throttle_for(self, method: str, seconds: float, *, retry_after: int = 1) -> None:
        """Every call of method gets 429 with this Retry-After for the next `seconds` (a persistent limit)."""
        self._throttled_until[method] = (time.monotonic() + seconds, retry_after)

    def fail_with(self, method: str, *, status: int = 500, times: int = 1) -> None:
        """The next `times` calls of method get this HTTP status (a server error) and no result."""
        self._forced_status.setdefault(method, deque()).extend([status] * times)

    def refuse_streaming(self, error: str = "unknown_method", *, times: int | None = None) -> None:
        """chat.startStream answers {"ok": false, "error": error} (an older workspace, a missing scope, an
        enterprise policy): always, or for the next `times` calls."""
        if times is None:
            self.failing["chat.startStream"] = error
        else:
            self._refusals.setdefault("chat.startStream", deque()).extend([error] * times)

    def hold(self, method: str, *, times: int = 1) -> None:
        """The next `times` calls of method take effect but get no response until release_held() (or
        close()): like a process killed after sending the call, before Slack's answer arrived."""
        self._holds[method] += times

    def release_held(self) -> None:
        """Answer the held calls (their clients may be gone)."""
        self._release.set()

    def channel_post_limit(self, *, per_second: float = 1.0, burst: int = 3) -> None:
        """Enforce Slack's chat.postMessage limit per channel: a bucket of `burst` refilled per_second."""
        self._post_rate = (per_second, float(burst))
        self._post_buckets.clear()

    def tier_limit(self, method: str, *, per_minute: int, window: float = 60.0) -> None:
        """Enforce a sliding-window budget on method, answering 429 (with Retry-After) beyond it."""
        self._tiers[method] = (per_minute, window)
        self._windows[method] = deque()

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method and call.status == 200]

    async def wait_for(self, predicate: Any, *, within: float = 5.0) -> None:
        """Wait until predicate() is true (re-checked on every call the mock receives)."""
        deadline = time.monotonic() + within
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("timed out waiting for the mock Slack API")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=min(remaining, 0.1))

    # ---------- server
    async def start(self) -> MockSlackApi:
        app = web.Application()
        app.router.add_post("/api/{method}", self._handle)
        app.router.add_get("/api/{method}", self._handle)
        app.router.add_post("/respond/{name}", self._respond)
        app.router.add_get("/link", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        self.release_held()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _params(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        body = await request.text()
        if body:
            if request.content_type == "application/json":
                params.update(json.loads(body))
            else:
                params.update(dict(parse_qsl(body, keep_blank_values=True)))
        return {key: _decode(value) for key, value in params.items()}

    def _channel_throttled(self, channel: str) -> int | None:
        if self._post_rate is None:
            return None
        rate, burst = self._post_rate
        now = time.monotonic()
        tokens, at = self._post_buckets.get(channel, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        if tokens < 1:
            self._post_buckets[channel] = (tokens, now)
            return max(1, math.ceil((1 - tokens) / rate))
        self._post_buckets[channel] = (tokens - 1, now)
        return None

    def _throttled(self, method: str, params: dict[str, Any]) -> int | None:
        forced = self._forced_429.get(method)
        if forced:
            return forced.popleft()
        until, retry_after = self._throttled_until.get(method, (0.0, 0))
        if time.monotonic() < until:
            return retry_after
        if method == "chat.postMessage":
            limited = self._channel_throttled(str(params.get("channel") or ""))
            if limited is not None:
                return limited
        if method in self._tiers:
            limit, window = self._tiers[method]
            spent, now = self._windows[method], time.monotonic()
            while spent and spent[0] <= now - window:
                spent.popleft()
            if len(spent) >= limit:
                return max(1, math.ceil(spent[0] + window - now))
            spent.append(now)
        return None

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await self._params(request)
        call = ApiCall(method, params, time.monotonic())
        self.calls.append(call)
        try:
            failing = self._forced_status.get(method)
            if failing:
                call.status = failing.popleft()
                self.server_errors[method] += 1
                return web.Response(status=call.status, text="Internal Server Error")
            retry_after = self._throttled(method, params)
            if retry_after is not None:
                call.status = 429
                self.rate_limited[method] += 1
                return web.json_response(
                    {"ok": False, "error": "ratelimited"},
                    status=429,
                    headers={"Retry-After": str(retry_after)},
                )
            token_kind = "Bearer xapp-" if method == "apps.connections.open" else "Bearer xoxb-"
            if not request.headers.get("Authorization", "").startswith(token_kind):
                return web.json_response({"ok": False, "error": "not_authed"})
            if request.headers["Authorization"] == "Bearer xoxb-invalid":
                return web.json_response({"ok": False, "error": "invalid_auth"})
            if method in self.failing:
                return web.json_response({"ok": False, "error": self.failing[method]})
            refusals = self._refusals.get(method)
            if refusals:
                return web.json_response({"ok": False, "error": refusals.popleft()})
            problems = self._validate(method, params)
            if problems:
                self.violations.extend(problems)
                return web.json_response({"ok": False, "error": "invalid_blocks", "problems": problems})
            handler = getattr(self, "_" + method.replace(".", "_"), None)
            answer = handler(params) if handler else {"ok": True}
            if self._holds[method] > 0:
                self._holds[method] -= 1
                self.held.append(call)
                self.changed.set()
                await self._release.wait()
            granted = self.granted_scopes
            headers = {"x-oauth-scopes": ",".join(granted)} if method == "auth.test" and granted else None
            return web.json_response(answer, headers=headers)
        finally:
            self.changed.set()

    async def _respond(self, request: web.Request) -> web.Response:
        payload = json.loads(await request.text() or "{}")
        problems = check_message(payload, method="response_url")
        self.violations.extend(problems)
        self.responses.append({"name": request.match_info["name"], **payload})
        self.changed.set()
        return web.Response(text="ok" if not problems else "invalid_blocks")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        """Socket Mode: say hello, push the queued envelopes, record the client's acks."""
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}})
        for envelope in self.socket_envelopes:
            await socket.send_json(envelope)
        async for frame in socket:
            if frame.type == WSMsgType.TEXT:
                self.socket_acks.append(json.loads(frame.data))
                self.changed.set()
        return socket

    def _validate(self, method: str, params: dict[str, Any]) -> list[str]:
        problems = check_metadata(params, method=method)
        if method in MESSAGE_METHODS:
            return problems + check_message(params, method=method)
        if method in VIEW_METHODS:
            return check_view(params.get("view"), method=method)
        if method == "views.publish":
            return check_home_view(params.get("view"), method=method)
        if method in STREAM_METHODS:
            return problems + check_stream_call(params, method=method)
        return problems

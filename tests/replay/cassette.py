"""Cassettes: a real model server's request/response pairs, recorded once (tests.replay.record) and
replayed by the test suite through the scripted server (ModelServer(cassette=...)).

A cassette is one JSON file: a header (model, server, date, question set, settings) and the interactions
in recorded order. An interaction is the request (method, path, JSON body) and the response (status,
content type, and either its body or its server-sent-event chunks, every chunk kept; see _encode_chunks
for how they are written compactly).

Replay (Replayer) answers a request with the recorded response whose method, path and canonical body
(JSON with sorted keys) are the same; the same request recorded twice is answered in recorded order.
A request that matches nothing is a Mismatch: it names the closest recorded request and the first part
of the body that differs.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1
RECORD_COMMAND = (
    "python -m tests.replay.record --base-url http://127.0.0.1:19200/v1 --model qwen2.5-coder-0.5b "
    "--out tests/replay/cassettes/qwen2.5-0.5b.json"
)
_CONTEXT_CHARS = 40


def canonical_body(body: Any) -> str:
    """The body as canonical JSON text: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(method: str, path: str, body: Any) -> str:
    """What a replayed request must match: method, path (with its query) and canonical body."""
    return f"{method.upper()} {path}\n{canonical_body(body)}"


@dataclass(frozen=True, slots=True)
class RecordedResponse:
    """A response as the server sent it: a body, or the data of each server-sent event in order.

    A JSON event is kept as its parsed object; any other event line (e.g. "data: [DONE]") as its text.
    """

    status: int
    content_type: str
    body: Any = None
    chunks: tuple[Any, ...] | None = None

    @property
    def is_stream(self) -> bool:
        return self.chunks is not None

    def sse_lines(self) -> list[bytes]:
        """The stream as it goes on the wire: one event per item."""
        lines = []
        for chunk in self.chunks or ():
            text = chunk if isinstance(chunk, str) else f"data: {json.dumps(chunk, ensure_ascii=False)}"
            lines.append(f"{text}\n\n".encode())
        return lines

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.status, "content_type": self.content_type}
        if self.chunks is None:
            data["body"] = self.body
            return data
        carry = _carried_fields([c for c in self.chunks if isinstance(c, dict)])
        data["carry"] = carry
        data["chunks"] = _encode_chunks(self.chunks, carry)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RecordedResponse:
        status, content_type = int(data["status"]), str(data.get("content_type", ""))
        if "chunks" not in data:
            return cls(status, content_type, body=data.get("body"))
        chunks = _decode_chunks(data["chunks"], list(data.get("carry") or []))
        return cls(status, content_type, chunks=tuple(chunks))


# On disk, a stream's chunks are written compactly and without loss:
# - "carry" fields (top-level fields every JSON chunk has, such as id, created, model) are written only in
#   the chunks where their value changes, and read as the last value written;
# - a chunk that is then nothing but one content delta, {"choices": [{"finish_reason": null, "index": 0,
#   "delta": {"content": TEXT}}]}, is written as the plain string TEXT (a stream reads as its text);
# - an event line that is not JSON data (e.g. "data: [DONE]") is written as {"line": "data: [DONE]"}.
_NOT_CARRIED = ("choices", "usage", "timings")


def _carried_fields(chunks: list[dict[str, Any]]) -> list[str]:
    if not chunks:
        return []
    return [key for key in chunks[0] if key not in _NOT_CARRIED and all(key in c for c in chunks)]


def _content_delta(chunk: dict[str, Any]) -> str | None:
    """TEXT when the chunk is exactly one content delta of choice 0 with no finish reason."""
    choices = chunk.get("choices")
    if set(chunk) != {"choices"} or not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    delta = choice.get("delta") if isinstance(choice, dict) else None
    if choice != {"finish_reason": None, "index": 0, "delta": delta} or not isinstance(delta, dict):
        return None
    content = delta.get("content")
    return content if set(delta) == {"content"} and isinstance(content, str) else None


def _encode_chunks(chunks: tuple[Any, ...], carry: list[str]) -> list[Any]:
    encoded: list[Any] = []
    last: dict[str, Any] = {}
    for chunk in chunks:
        if isinstance(chunk, str):
            encoded.append({"line": chunk})
            continue
        kept = {k: v for k, v in chunk.items() if k not in carry or last.get(k, KeyError) != v}
        last.update({k: chunk[k] for k in carry})
        text = _content_delta(kept)
        encoded.append(kept if text is None else text)
    return encoded


def _decode_chunks(items: list[Any], carry: list[str]) -> list[Any]:
    chunks: list[Any] = []
    last: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict) and set(item) == {"line"}:
            chunks.append(item["line"])
            continue
        if isinstance(item, str):
            item = {"choices": [{"finish_reason": None, "index": 0, "delta": {"content": item}}]}
        last.update({k: item[k] for k in carry if k in item})
        chunks.append({**item, **{k: last[k] for k in carry if k in last}})
    return chunks


@dataclass(frozen=True, slots=True)
class Interaction:
    """One request and the response it got (seconds: how long the real server took, for information)."""

    method: str
    path: str
    body: Any
    response: RecordedResponse
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return request_key(self.method, self.path, self.body)

    def to_dict(self) -> dict[str, Any]:
        return {
            "request": {"method": self.method, "path": self.path, "body": self.body},
            "response": self.response.to_dict(),
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interaction:
        request = data["request"]
        return cls(
            method=str(request["method"]).upper(),
            path=str(request["path"]),
            body=request.get("body"),
            response=RecordedResponse.from_dict(data["response"]),
            seconds=float(data.get("seconds", 0.0)),
        )


@dataclass
class Cassette:
    """A header and the interactions in recorded order."""

    header: dict[str, Any] = field(default_factory=dict)
    interactions: list[Interaction] = field(default_factory=list)

    def to_json(self) -> str:
        """The file's text: the header, then one interaction per block (readable, diffable)."""
        data = {
            "format": FORMAT,
            "header": self.header,
            "interactions": [i.to_dict() for i in self.interactions],
        }
        return json.dumps(data, ensure_ascii=False, indent=1) + "\n"

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def from_json(cls, text: str) -> Cassette:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError(f"cassette format {data.get('format')!r} is not {FORMAT}")
        return cls(dict(data.get("header") or {}), [Interaction.from_dict(i) for i in data["interactions"]])

    @classmethod
    def load(cls, path: Path) -> Cassette:
        return cls.from_json(path.read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A request the cassette has no answer for."""

    method: str
    path: str
    closest: int | None  # index of the closest recorded interaction
    difference: str

    @property
    def message(self) -> str:
        where = (
            f"closest recorded request: #{self.closest}; first difference: {self.difference}"
            if self.closest is not None
            else "the cassette has no request at all"
        )
        return f"no recorded request matches {self.method} {self.path}; {where}"


class Replayer:
    """Answers requests from a cassette; keeps what was served and what matched nothing."""

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette
        self._by_key: dict[str, list[int]] = {}
        for index, interaction in enumerate(cassette.interactions):
            self._by_key.setdefault(interaction.key, []).append(index)
        self._served_per_key: Counter[str] = Counter()
        self.served: list[int] = []
        self.repeated: list[int] = []  # served again after its recorded answers ran out
        self.mismatches: list[Mismatch] = []

    def match(self, method: str, path: str, body: Any) -> Interaction | Mismatch:
        """The next recorded response to this request (the last one again once all were served)."""
        key = request_key(method, path, body)
        indexes = self._by_key.get(key)
        if not indexes:
            mismatch = self._mismatch(method.upper(), path, body)
            self.mismatches.append(mismatch)
            return mismatch
        position = self._served_per_key[key]
        self._served_per_key[key] += 1
        index = indexes[min(position, len(indexes) - 1)]
        (self.served if position < len(indexes) else self.repeated).append(index)
        return self.cassette.interactions[index]

    @property
    def unused(self) -> list[int]:
        """Recorded interactions never served."""
        served = set(self.served)
        return [i for i in range(len(self.cassette.interactions)) if i not in served]

    def _mismatch(self, method: str, path: str, body: Any) -> Mismatch:
        interactions = self.cassette.interactions
        same = [i for i, x in enumerate(interactions) if x.method == method and x.path == path]
        candidates = same or list(range(len(interactions)))
        if not candidates:
            return Mismatch(method, path, None, "")
        given = canonical_body(body)
        closest = max(candidates, key=lambda i: _common_prefix(canonical_body(interactions[i].body), given))
        recorded = interactions[closest]
        if recorded.method != method or recorded.path != path:
            difference = f"request line: recorded {recorded.method} {recorded.path}"
        else:
            difference = first_difference(recorded.body, body) or "none (bodies are equal)"
        return Mismatch(method, path, closest, difference)


def _common_prefix(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def first_difference(recorded: Any, given: Any, where: str = "body") -> str | None:
    """The first place where two JSON values differ, e.g. `body.messages[1].content at character 57: …`."""
    if isinstance(recorded, dict) and isinstance(given, dict):
        for key in sorted(set(recorded) | set(given)):
            if key not in given:
                return f"{where}.{key}: recorded, missing now"
            if key not in recorded:
                return f"{where}.{key}: new (not in the recording)"
            found = first_difference(recorded[key], given[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(given, list):
        for index, (old, new) in enumerate(zip(recorded, given, strict=False)):
            found = first_difference(old, new, f"{where}[{index}]")
            if found:
                return found
        if len(recorded) != len(given):
            return f"{where}: {len(recorded)} items recorded, {len(given)} now"
        return None
    if isinstance(recorded, str) and isinstance(given, str):
        if recorded == given:
            return None
        at = _common_prefix(recorded, given)
        start = max(0, at - _CONTEXT_CHARS)
        old, new = recorded[start : at + _CONTEXT_CHARS], given[start : at + _CONTEXT_CHARS]
        return f"{where} at character {at}: recorded {old!r}, now {new!r}"
    if recorded != given or type(recorded) is not type(given):
        return f"{where}: recorded {json.dumps(recorded, ensure_ascii=False)[:80]}, now {json.dumps(given, ensure_ascii=False)[:80]}"
    return None


def failure_text(replayer: Replayer, *, command: str = RECORD_COMMAND) -> str | None:
    """The replay test's failure message when some request matched nothing, else None."""
    if not replayer.mismatches:
        return None
    first = replayer.mismatches[0]
    return (
        f"the prompts changed since the cassette was recorded; re-record with: {command}\n"
        f"{len(replayer.mismatches)} request(s) matched nothing; the first: {first.message}"
    )

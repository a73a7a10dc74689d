"""The evaluation question format: one JSON object a line, bad lines reported with their number and skipped."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Gold:
    """A paragraph that answers (part of) a question: identified by a string its text must contain."""

    must_contain: str
    file: str = ""
    article: str = ""

    def label(self) -> str:
        """How the gold item is shown in reports."""
        where = " ".join(part for part in (self.file, self.article) if part)
        return f"{where}: {self.must_contain}" if where else self.must_contain


@dataclass(frozen=True, slots=True)
class EvalQuestion:
    """One line of a question set."""

    id: str
    type: str
    question: str
    gold: tuple[Gold, ...] = ()
    turns: tuple[str, ...] = ()
    answer_keywords: tuple[str, ...] = ()
    expect_notice: bool = False
    notes: str = ""
    line: int = 0

    def to_json(self) -> dict[str, Any]:  # JSON boundary: one line of a question file
        """The line `parse_question` reads back as this question (empty fields left out)."""
        data: dict[str, Any] = {"id": self.id, "type": self.type, "question": self.question}
        if self.turns:
            data["turns"] = list(self.turns)
        if self.gold:
            data["gold"] = [
                {
                    key: value
                    for key, value in (
                        ("must_contain", g.must_contain),
                        ("file", g.file),
                        ("article", g.article),
                    )
                    if value
                }
                for g in self.gold
            ]
        if self.answer_keywords:
            data["answer_keywords"] = list(self.answer_keywords)
        data["expect_notice"] = self.expect_notice
        if self.notes:
            data["notes"] = self.notes
        return data


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that could not be used, and why."""

    line: int
    reason: str


@dataclass
class QuestionSet:
    """The usable questions of a file and the lines that were skipped."""

    questions: list[EvalQuestion] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"`{name}` must be a list of strings")
    return tuple(item for item in value if item.strip())


def _gold(value: Any) -> tuple[Gold, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError("`gold` must be a list of objects")
    items = []
    for index, item in enumerate(value, start=1):
        if isinstance(item, str):
            item = {"must_contain": item}
        if not isinstance(item, dict) or not isinstance(item.get("must_contain"), str):
            raise ValueError(f"gold item {index} needs a string `must_contain`")
        if not item["must_contain"].strip():
            raise ValueError(f"gold item {index} has an empty `must_contain`")
        items.append(
            Gold(
                must_contain=item["must_contain"],
                file=str(item.get("file") or ""),
                article=str(item.get("article") or ""),
            )
        )
    return tuple(items)


def parse_question(row: Any, *, line: int) -> EvalQuestion:
    """One decoded line as a question; raises ValueError with a readable reason."""
    if not isinstance(row, dict):
        raise ValueError("a line must be a JSON object")
    text = row.get("question")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("`question` must be a non-empty string")
    gold = _gold(row.get("gold"))
    expect = row.get("expect_notice")
    if expect is not None and not isinstance(expect, bool):
        raise ValueError("`expect_notice` must be true or false")
    return EvalQuestion(
        id=str(row.get("id") or f"line-{line}"),
        type=str(row.get("type") or "untyped"),
        question=text.strip(),
        gold=gold,
        turns=_strings(row.get("turns"), "turns"),
        answer_keywords=_strings(row.get("answer_keywords"), "answer_keywords"),
        expect_notice=(not gold) if expect is None else expect,
        notes=str(row.get("notes") or ""),
        line=line,
    )


def parse_lines(lines: Iterable[str]) -> QuestionSet:
    """Every usable question; blank lines are ignored, bad ones recorded with their line number."""
    parsed = QuestionSet()
    seen: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            question = parse_question(json.loads(raw), line=number)
        except json.JSONDecodeError as exc:
            parsed.bad_lines.append(BadLine(number, f"not JSON ({exc.msg})"))
            continue
        except ValueError as exc:
            parsed.bad_lines.append(BadLine(number, str(exc)))
            continue
        if question.id in seen:
            parsed.bad_lines.append(BadLine(number, f"duplicate id {question.id!r}"))
            continue
        seen.add(question.id)
        parsed.questions.append(question)
    return parsed

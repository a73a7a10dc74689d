"""The Chinese law evaluation set parses, meets its mix, and every gold string is in the article it names."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path
from typing import Any

import pytest

SET_FILE = Path(__file__).with_name("laws_zh.jsonl")
EVERYDAY_FILE = Path(__file__).with_name("laws_zh_everyday.jsonl")  # the second tuning set, everyday words
TYPES = ("single", "compound", "multihop", "followup", "absent", "version")
MINIMUMS = {"single": 12, "compound": 6, "multihop": 6, "followup": 12, "absent": 6, "version": 6}
MUST_CONTAIN_LENGTH = range(8, 41)
# A single question is "worded differently" when it shares no run this long with its gold paragraph.
PARAPHRASE_MAX_SHARED_RUN = 6
ARTICLE_START = re.compile(r"^第[零〇一二三四五六七八九十百千]+条(?:之[一二三四五六七八九十]+)?")
VERSIONED_NAME = re.compile(r"^(?P<title>.+)\((?P<date>\d{4}-\d{2}-\d{2})\)\.md$")


def _laws_dir() -> Path | None:
    """The corpus next to the repository, else the folder named by KB_EVAL_LAWS_DIR."""
    beside_repo = Path(__file__).resolve().parents[3] / "shared/data/zh_laws"
    if beside_repo.is_dir():
        return beside_repo
    configured = os.environ.get("KB_EVAL_LAWS_DIR")
    return Path(configured) if configured and Path(configured).is_dir() else None


# Read at import: the suite's autouse fixture clears KB_* variables before each test runs.
LAWS_DIR = _laws_dir()
needs_corpus = pytest.mark.skipif(
    LAWS_DIR is None,
    reason="law corpus not found beside the repository (shared/data/zh_laws) nor at $KB_EVAL_LAWS_DIR",
)


def normalise(text: str) -> str:
    """NFKC form with all whitespace removed, so full-width and spacing differences do not matter."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@dataclass(frozen=True)
class Paragraph:
    """One blank-line-separated paragraph of a statute and the article it belongs to ('' outside articles)."""

    article: str
    text: str


def article_paragraphs(markdown: str) -> list[Paragraph]:
    """Blank-line paragraphs; one opening with 第N条 starts an article, its 款/项 paragraphs follow it."""
    paragraphs: list[Paragraph] = []
    article = ""
    for block in re.split(r"\n\s*\n", markdown):
        text = normalise(block)
        if not text:
            continue
        opening = ARTICLE_START.match(text)
        if opening:
            article = opening.group(0)
        elif text.startswith(("#", "<!--")):
            article = ""
        paragraphs.append(Paragraph(article, text))
    return paragraphs


class Corpus:
    """The statutes under one folder, found by file name in any sub-folder."""

    def __init__(self, root: Path) -> None:
        self._paths: dict[str, list[Path]] = {}
        for path in sorted(root.rglob("*.md")):
            self._paths.setdefault(path.name, []).append(path)

    def copies(self, name: str) -> list[Path]:
        """Every file with this name (some laws sit in two folders)."""
        return self._paths.get(name, [])

    def versions(self, name: str) -> dict[str, str]:
        """Date → file name for every dated version of the same title as `name`."""
        match = VERSIONED_NAME.match(name)
        if not match:
            return {}
        found = (VERSIONED_NAME.match(other) for other in self._paths)
        return {m["date"]: m.group(0) for m in found if m and m["title"] == match["title"]}

    @staticmethod
    @cache
    def paragraphs(path: Path) -> tuple[Paragraph, ...]:
        """The file's paragraphs, parsed once."""
        return tuple(article_paragraphs(path.read_text(encoding="utf-8")))

    def text(self, name: str) -> str:
        """The normalised text of the first copy of a file."""
        return "".join(p.text for p in self.paragraphs(self.copies(name)[0]))


def gold_problems(gold: dict[str, Any], corpus: Corpus) -> list[str]:
    """Why one gold entry does not point at a single paragraph of the article it names (empty when it does)."""
    must, name, article = gold.get("must_contain"), gold.get("file"), gold.get("article")
    if not (isinstance(must, str) and isinstance(name, str) and isinstance(article, str)):
        return [f"gold needs string must_contain, file and article: {gold}"]
    needle = normalise(must)
    if len(needle) not in MUST_CONTAIN_LENGTH:
        return [f"must_contain has {len(needle)} characters, not 8–40: {must}"]
    if not corpus.copies(name):
        return [f"no file named {name}"]
    for path in corpus.copies(name):
        holders = [p for p in corpus.paragraphs(path) if needle in p.text]
        if len(holders) == 1 and holders[0].article == normalise(article):
            return []
    return [f"{must!r} is not in exactly one paragraph of {name} {article}"]


def gold_paragraph(gold: dict[str, Any], corpus: Corpus) -> str:
    """The text of the paragraph a (valid) gold entry points at."""
    path = corpus.copies(gold["file"])[0]
    return next(p.text for p in corpus.paragraphs(path) if normalise(gold["must_contain"]) in p.text)


def named_year(question: str, versions: dict[str, str]) -> str | None:
    """The date of the version whose year the question names, if it names one."""
    years = {date[:4]: date for date in versions}
    return next((years[y] for y in re.findall(r"(?<!\d)(\d{4})(?!\d)", question) if y in years), None)


def version_problems(row: dict[str, Any], corpus: Corpus) -> list[str]:
    """A version question's gold is the newest text (absent from older ones) unless it names an older year."""
    problems = []
    for gold in row["gold"]:
        versions = corpus.versions(gold["file"])
        if len(versions) < 2:
            problems.append(f"{gold['file']} has no other version in the corpus")
            continue
        newest = max(versions)
        wanted = named_year(row["question"], versions) or newest
        if versions[wanted] != gold["file"]:
            problems.append(f"{row['id']}: gold should be {versions[wanted]}, not {gold['file']}")
        if wanted == newest:
            for date in sorted(set(versions) - {newest}):
                if normalise(gold["must_contain"]) in corpus.text(versions[date]):
                    problems.append(f"{row['id']}: {gold['must_contain']!r} also in {versions[date]}")
    return problems


def row_problems(row: dict[str, Any], corpus: Corpus) -> list[str]:
    """Everything wrong with one line of the set: its fields, its gold, and its type's rules."""
    if row.get("type") not in TYPES or not str(row.get("question", "")).strip():
        return [f"{row.get('id')}: bad type or empty question"]
    gold, turns = row.get("gold"), row.get("turns", [])
    if not isinstance(gold, list) or not isinstance(turns, list):
        return [f"{row['id']}: gold and turns must be lists"]
    problems = [f"{row['id']}: {p}" for entry in gold for p in gold_problems(entry, corpus)]
    if problems:
        return problems
    if row["type"] == "absent" and gold:
        problems.append(f"{row['id']}: absent questions have no gold")
    if row["type"] != "absent" and not gold:
        problems.append(f"{row['id']}: answerable questions need gold")
    if row["type"] == "followup" and not (turns and all(isinstance(t, str) and t.strip() for t in turns)):
        problems.append(f"{row['id']}: a follow-up needs its earlier turns")
    if row["type"] == "multihop" and len({(g["file"], g["article"]) for g in gold}) < 2:
        problems.append(f"{row['id']}: a multi-hop question needs gold for both hops")
    if row["type"] == "compound" and not isinstance(row.get("expect_notice"), bool):
        problems.append(f"{row['id']}: compound questions set expect_notice explicitly")
    if row["type"] == "version":
        problems += version_problems(row, corpus)
    gold_text = "".join(gold_paragraph(entry, corpus) for entry in gold)
    problems += [
        f"{row['id']}: answer keyword {kw!r} is not in its gold paragraphs"
        for kw in row.get("answer_keywords", [])
        if normalise(kw) not in gold_text
    ]
    return problems


def load_rows(path: Path = SET_FILE) -> list[dict[str, Any]]:
    """Every line of a set, parsed (a line that is not a JSON object fails the test that loads it)."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        assert isinstance(row, dict), f"line {number} is not a JSON object"
        rows.append(row)
    return rows


def expects_notice(row: dict[str, Any]) -> bool:
    """The set's notice rule: explicit expect_notice, else true exactly when there is no gold."""
    return bool(row.get("expect_notice", not row["gold"]))


def shared_run(question: str, paragraph: str) -> int:
    """Length of the longest run of characters the question copies from its gold paragraph."""
    a, b = normalise(question), paragraph
    return SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b)).size


def is_reworded(row: dict[str, Any], corpus: Corpus) -> bool:
    """True when the question copies no run longer than PARAPHRASE_MAX_SHARED_RUN from any gold paragraph."""
    runs = (shared_run(row["question"], gold_paragraph(gold, corpus)) for gold in row["gold"])
    return max(runs) <= PARAPHRASE_MAX_SHARED_RUN


def test_every_line_parses_with_unique_ids_and_known_types() -> None:
    """Each line is a JSON object with a unique id, a known type and a question."""
    rows = load_rows()
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    assert {row["type"] for row in rows} <= set(TYPES)
    assert all(isinstance(row["question"], str) and row["question"].strip() for row in rows)


def test_type_mix_meets_the_minimums() -> None:
    """At least 12 single, 6 compound (4 with an absent part), 6 multihop, 12 followup, 6 absent, 6 version."""
    rows = load_rows()
    counts = Counter(row["type"] for row in rows)
    assert all(counts[kind] >= n for kind, n in MINIMUMS.items()), counts
    compound_with_gap = [r for r in rows if r["type"] == "compound" and expects_notice(r)]
    assert len(compound_with_gap) >= 4
    assert all(r["gold"] for r in compound_with_gap), "an absent part still leaves gold for the other parts"
    assert all(r["type"] == "absent" or r["gold"] for r in rows)
    assert all(r.get("turns") for r in rows if r["type"] == "followup")


@needs_corpus
def test_every_line_points_at_its_article_in_the_corpus() -> None:
    """Every gold string sits in one paragraph of the named article; version and type rules hold."""
    assert LAWS_DIR is not None
    corpus = Corpus(LAWS_DIR)
    problems = [p for row in load_rows() for p in row_problems(row, corpus)]
    assert problems == []


def test_the_everyday_set_parses_with_ids_no_other_line_uses() -> None:
    """The everyday set's lines are JSON objects of known types, their ids unique across both sets."""
    rows = load_rows(EVERYDAY_FILE)
    ids = [row["id"] for row in [*load_rows(), *rows]]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    assert {row["type"] for row in rows} <= set(TYPES)


@needs_corpus
def test_every_line_of_the_everyday_set_points_at_its_article_in_words_the_statute_does_not_use() -> None:
    """Every gold string of the everyday set sits in one paragraph of its article, and every single question
    copies no run of more than 6 characters from its gold paragraph."""
    assert LAWS_DIR is not None
    corpus = Corpus(LAWS_DIR)
    rows = load_rows(EVERYDAY_FILE)
    assert [p for row in rows for p in row_problems(row, corpus)] == []
    copying = [r["id"] for r in rows if r["type"] == "single" and not is_reworded(r, corpus)]
    assert copying == []


@needs_corpus
def test_version_questions_ask_for_the_newest_four_times_and_an_older_year_twice() -> None:
    """At least 4 version questions name no year (gold: newest) and 2 name an older year (gold: that one)."""
    assert LAWS_DIR is not None
    corpus = Corpus(LAWS_DIR)
    versions = [r for r in load_rows() if r["type"] == "version"]
    named = [r for r in versions if named_year(r["question"], corpus.versions(r["gold"][0]["file"]))]
    assert len(versions) - len(named) >= 4
    assert len(named) >= 2


@needs_corpus
def test_ten_single_questions_are_worded_differently_from_the_statute() -> None:
    """At least 10 single questions copy no run of more than 6 characters from their gold paragraph."""
    assert LAWS_DIR is not None
    corpus = Corpus(LAWS_DIR)
    singles = [r for r in load_rows() if r["type"] == "single"]
    reworded = [r for r in singles if is_reworded(r, corpus)]
    assert len(reworded) >= 10, [r["id"] for r in singles if r not in reworded]


def test_the_checker_rejects_a_made_up_line(tmp_path: Path) -> None:
    """On a tiny corpus, a right line passes and a wrong article, a missing string and absent gold all fail."""
    statute = "# 中华人民共和国示例法\n\n<!-- INFO END -->\n\n## 第一章 总则\n\n第一条 申请期限为六十日。\n\n前款期限自知道之日起计算。\n\n第二条 另行规定。\n"
    (tmp_path / "示例法(2020-01-01).md").write_text(statute, encoding="utf-8")
    corpus = Corpus(tmp_path)

    def line(must: str, article: str, type_: str = "single") -> dict[str, Any]:
        gold = {"must_contain": must, "file": "示例法(2020-01-01).md", "article": article}
        row = {"id": "x", "type": type_, "question": "期限多久？", "gold": [gold]}
        return {**row, "answer_keywords": ["六十日"]}

    assert row_problems(line("申请期限为六十日", "第一条"), corpus) == []
    assert row_problems({**line("前款期限自知道之日起计算", "第一条"), "answer_keywords": []}, corpus) == []
    assert row_problems(line("申请期限为六十日", "第二条"), corpus)
    assert row_problems(line("申请期限为九十日", "第一条"), corpus)
    keyword_elsewhere = line("前款期限自知道之日起计算", "第一条")
    assert row_problems(keyword_elsewhere, corpus), "the keyword is in another paragraph"
    assert row_problems(line("申请期限为六十日", "第一条", type_="absent"), corpus)
    assert row_problems(line("申请期限为六十日", "第一条", type_="version"), corpus), "no other version"


def test_the_version_rule_rejects_old_text_and_the_wrong_year(tmp_path: Path) -> None:
    """No year: gold must be newest-only text; an older year moves the gold there; copying is not rewording."""
    old = "第一条 申请期限为六十日，自知道之日起计算。\n"
    new = "第一条 申请期限为六十日，自知道或者应当知道之日起计算。\n"
    (tmp_path / "示例法(2017-01-01).md").write_text(old, encoding="utf-8")
    (tmp_path / "示例法(2023-01-01).md").write_text(new, encoding="utf-8")
    corpus = Corpus(tmp_path)

    def line(question: str, must: str, year: str) -> dict[str, Any]:
        gold = {"must_contain": must, "file": f"示例法({year}-01-01).md", "article": "第一条"}
        return {"id": "v", "type": "version", "question": question, "gold": [gold]}

    assert row_problems(line("期限从何时起算？", "自知道或者应当知道之日起计算", "2023"), corpus) == []
    assert row_problems(line("2017年的示例法期限从何时起算？", "自知道之日起计算", "2017"), corpus) == []
    assert row_problems(line("期限多久？", "申请期限为六十日", "2023"), corpus), "text shared with 2017"
    assert row_problems(line("期限从何时起算？", "自知道之日起计算", "2017"), corpus), "old file, no year"
    assert row_problems(line("2017年的示例法期限？", "申请期限为六十日", "2023"), corpus), "year ignored"
    assert not is_reworded(line("申请期限为六十日吗？", "申请期限为六十日", "2023"), corpus), (
        "copies the statute"
    )
    assert is_reworded(line("要在几天里提出？", "申请期限为六十日", "2023"), corpus)

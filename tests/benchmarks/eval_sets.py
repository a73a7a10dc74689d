"""Turn the shared evaluation data into `kb eval` question sets plus a Markdown corpus to ingest.

Run: python tests/benchmarks/eval_sets.py NAME --out DIR      (NAME: hotpot-dev, hotpot-train, cmrc)
then: kb ingest DIR/corpus --dataset NAME && kb eval DIR/questions.jsonl --dataset NAME

The data is read in place from ../shared/data (never copied into the project); DIR is a scratch folder.
Each paragraph (HotpotQA) or passage (CMRC) becomes one Markdown document ``# Title`` + text, named
``Title-<hash>.md``. Gold items are ``must_contain`` strings taken from the gold paragraph's own text
(HotpotQA dev: its first 80 characters; HotpotQA train: the first supporting sentence of each supporting
title; CMRC: the answer with 12 characters of context on each side), so matching never depends on names.

* hotpot-dev: HotpotQA dev-500 (IRCoT subsample), 4,858 pooled paragraphs, type ``multihop``. Tuning set.
* hotpot-train: HotpotQA train-100 with its own 994-title corpus, types ``bridge`` / ``comparison``.
  VALIDATION ONLY: never tune on it.
* cmrc: CMRC 2018 dev, every 10th question (322), passages as documents, type ``single``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
_UNSAFE = re.compile(r"[^\w\- ().,']+")


def _file_name(title: str, text: str) -> str:
    digest = hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:6]
    stem = _UNSAFE.sub("_", title).strip(" _.")[:80] or "untitled"
    return f"{stem}-{digest}.md"


def _write_corpus(out: Path, documents: Iterable[tuple[str, str]]) -> int:
    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    count = 0
    for title, text in documents:
        (corpus / _file_name(title, text)).write_text(f"# {title}\n\n{text.strip()}\n", encoding="utf-8")
        count += 1
    return count


def _write_questions(out: Path, rows: Iterable[dict[str, Any]]) -> int:
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    (out / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def _keywords(answer: str) -> list[str]:
    return [] if answer.strip().lower() in {"yes", "no", ""} else [answer.strip()]


def hotpot_dev(out: Path) -> tuple[int, int]:
    """HotpotQA dev-500: pooled unique paragraphs; gold = the supporting paragraphs' first 80 characters."""
    pool: dict[tuple[str, str], None] = {}
    rows = []
    path = DATA / "multihop_en" / "hotpotqa_dev500_ircot.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        gold = []
        for context in item["contexts"]:
            text = context["paragraph_text"].strip()
            pool.setdefault((context["title"], text), None)
            if context.get("is_supporting"):
                gold.append({"must_contain": text[:80]})
        spans = item["answers_objects"][0]["spans"] if item.get("answers_objects") else []
        rows.append(
            {
                "id": item["question_id"],
                "type": "multihop",
                "question": item["question_text"],
                "gold": gold,
                "answer_keywords": _keywords(spans[0]) if spans else [],
            }
        )
    return _write_corpus(out, pool), _write_questions(out, rows)


def hotpot_train(out: Path) -> tuple[int, int]:
    """HotpotQA train-100 with its corpus; gold = the first supporting sentence of each supporting title."""
    folder = DATA / "multihop_en"
    corpus = json.loads((folder / "hotpotqa_train100_corpus.json").read_text(encoding="utf-8"))
    questions = json.loads((folder / "hotpotqa_train100_questions.json").read_text(encoding="utf-8"))
    documents = [(title, "".join(sentences)) for title, sentences in corpus.items()]
    rows = []
    for item in questions:
        facts = item["supporting_facts"]
        facts = ast.literal_eval(facts) if isinstance(facts, str) else facts
        gold: dict[str, str] = {}
        for title, index in facts:
            sentences = corpus.get(title) or []
            if title not in gold and 0 <= index < len(sentences) and sentences[index].strip():
                gold[title] = sentences[index].strip()[:80]
        rows.append(
            {
                "id": item["_id"],
                "type": item.get("type") or "multihop",
                "question": item["question"],
                "gold": [{"must_contain": text} for text in gold.values()],
                "answer_keywords": _keywords(str(item.get("answer", ""))),
                "notes": f"level {item.get('level', '')}",
            }
        )
    return _write_corpus(out, documents), _write_questions(out, rows)


def cmrc(out: Path, *, every: int = 10) -> tuple[int, int]:
    """CMRC 2018 dev: passages as documents; every `every`-th question, gold = answer with context."""
    data = json.loads((DATA / "zh_cmrc2018" / "cmrc2018_dev_squad_style.json").read_text(encoding="utf-8"))
    documents: dict[tuple[str, str], None] = {}
    rows = []
    index = 0
    for article in data["data"]:
        title = article.get("title") or "untitled"
        for paragraph in article["paragraphs"]:
            context = paragraph["context"].strip()
            documents.setdefault((title, context), None)
            for qa in paragraph["qas"]:
                index += 1
                if (index - 1) % every:
                    continue
                answer = qa["answers"][0]
                start = context.find(answer["text"])
                start = start if start >= 0 else max(0, answer.get("answer_start", 0))
                snippet = context[max(0, start - 12) : start + len(answer["text"]) + 12].strip()
                rows.append(
                    {
                        "id": qa["id"],
                        "type": "single",
                        "question": qa["question"],
                        "gold": [{"must_contain": snippet}],
                        "answer_keywords": [answer["text"]],
                    }
                )
    return _write_corpus(out, documents), _write_questions(out, rows)


SETS = {"hotpot-dev": hotpot_dev, "hotpot-train": hotpot_train, "cmrc": cmrc}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(SETS))
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    documents, questions = SETS[args.name](args.out)
    print(
        f"{args.name}: {documents} documents in {args.out / 'corpus'}, {questions} questions in "
        f"{args.out / 'questions.jsonl'}"
    )


if __name__ == "__main__":
    main()

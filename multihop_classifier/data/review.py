"""``review``: a human pass over examples before a formal training run (at least 500 of them).

See docs/design.md#the-classifier-service.

Shows each question with its label, kind and rule features and takes one answer: Enter keeps the
label, ``f`` flips it, ``d`` drops the example, ``q`` stops. Every answer is appended to the output file
at once (nothing is lost on an interrupt) and a second run resumes where the last one stopped.
Reviewed examples carry ``reviewed: true``; dropped ones are kept in the file as ``review: dropped``
so they are not asked again, and ``train`` leaves them out.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from core.retrieval.complexity import FEATURE_NAMES, ComplexityFeatures, rule_score
from multihop_classifier import LABELS
from multihop_classifier.data.examples import Example, read_examples

ANSWERS = {"": "kept", "k": "kept", "f": "flipped", "d": "dropped"}
PROMPT = "keep [Enter] · flip [f] · drop [d] · quit [q]: "


def question_key(question: str) -> str:
    """The identity of a question across files (whitespace and case folded)."""
    return " ".join(question.split()).lower()


def reviewed_example(example: Example, answer: str) -> Example:
    """The example after one answer ("kept", "flipped" or "dropped")."""
    label = example.label
    if answer == "flipped":
        label = LABELS[1 - LABELS.index(label)]
    return replace(
        example,
        label=label,
        reviewed=answer != "dropped",
        extra={**example.extra, "review": answer},
    )


def pick_for_review(
    examples: Sequence[Example], done: set[str], *, sample: int | None, seed: int
) -> list[Example]:
    """Examples not reviewed yet; with ``sample``, a seeded draw balanced by label."""
    todo = [example for example in examples if question_key(example.question) not in done]
    if sample is None or sample >= len(todo):
        return todo
    rng = random.Random(seed)
    by_label = {label: [e for e in todo if e.label == label] for label in LABELS}
    for group in by_label.values():
        rng.shuffle(group)
    picked: list[Example] = []
    while len(picked) < sample and any(by_label.values()):
        for label in LABELS:
            if by_label[label] and len(picked) < sample:
                picked.append(by_label[label].pop())
    return picked


def _describe(example: Example, index: int, total: int) -> str:
    features = example.features or {}
    counts = [int(features.get(name, 0)) for name in FEATURE_NAMES]
    score = rule_score(ComplexityFeatures(counts[0], counts[1], counts[2], counts[3], counts[4]))
    numbers = ", ".join(f"{name} {int(value)}" for name, value in features.items())
    return (
        f"\n[{index}/{total}] {example.label.upper()}  ({example.kind or example.source or '-'}, {example.lang or '?'})\n"
        f"  {example.question}\n  rules: {numbers} -> score {score:.2f}"
    )


def review(
    data: Path, out: Path, *, sample: int | None, seed: int, stdin: TextIO, stdout: TextIO
) -> Counter[str]:
    """Ask about each picked example on stdout/stdin, appending every answer to ``out``; returns the tally."""
    done = (
        {question_key(e.question) for e in read_examples(out)}
        if out.is_file() and out.stat().st_size
        else set()
    )
    picked = pick_for_review(read_examples(data), done, sample=sample, seed=seed)
    tally: Counter[str] = Counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as handle:
        for index, example in enumerate(picked, 1):
            stdout.write(_describe(example, index, len(picked)) + "\n" + PROMPT)
            stdout.flush()
            line = stdin.readline()
            answer = line.strip().lower()
            if not line or answer == "q":
                break
            if answer not in ANSWERS:
                stdout.write(f"  '{answer}' is not an answer; asked again next run\n")
                continue
            handle.write(
                json.dumps(reviewed_example(example, ANSWERS[answer]).to_dict(), ensure_ascii=False) + "\n"
            )
            handle.flush()
            tally[ANSWERS[answer]] += 1
    total = len(done) + sum(tally.values())
    stdout.write(
        f"\nreviewed {sum(tally.values())} now (kept {tally['kept']}, flipped {tally['flipped']}, dropped "
        f"{tally['dropped']}); {total} in {out}, {max(0, 500 - total)} more for the 500 a formal run needs\n"
    )
    return tally

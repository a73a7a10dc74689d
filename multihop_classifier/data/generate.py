"""Seed data from rule templates (Chinese and English): balanced single/multi, with hard negatives and positives.

Hard cases are what a rule score gets wrong: long single-hop questions (long but one fact), single-hop
questions that carry comparison or logic markers (哪个/之后/如果/which/after/if) or name two entities,
and short comparison questions (multi-hop in five words). Every generated question still needs the
human review described in the labelling guide before a formal training run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from multihop_classifier import LABELS
from multihop_classifier.data import templates_en, templates_zh
from multihop_classifier.data.examples import Example
from multihop_classifier.data.features import compute_features

DEFAULT_COUNT = 1200
HARD_KINDS = frozenset({"short_comparison", "long_single", "marker_single", "two_entity_single"})
_SLOT = re.compile(r"\{([a-z_]+?)(2?)\}")
_LANGUAGES = {"zh": templates_zh, "en": templates_en}


def fill(template: str, slots: dict[str, tuple[str, ...]], rng: random.Random) -> str:
    """The template with each {slot} / {slot2} replaced; a slot and its slot2 never get the same value."""
    chosen: dict[str, list[str]] = {}

    def value(match: re.Match[str]) -> str:
        name, second = match.group(1), bool(match.group(2))
        picked = chosen.setdefault(name, rng.sample(slots[name], 2))
        return picked[1 if second else 0]

    return _SLOT.sub(value, template)


def generate(
    count: int = DEFAULT_COUNT, *, seed: int = 7, languages: Sequence[str] = ("zh", "en")
) -> list[Example]:
    """``count`` distinct examples, half multi and half single, split evenly across the languages."""
    unknown = [lang for lang in languages if lang not in _LANGUAGES]
    if unknown or not languages:
        raise ValueError(f"languages must be among {sorted(_LANGUAGES)}, got {list(languages)}")
    rng = random.Random(seed)
    cells = [(label, lang) for label in LABELS for lang in languages]
    quotas = [count // len(cells) + (1 if index < count % len(cells) else 0) for index in range(len(cells))]
    examples: list[Example] = []
    seen: set[str] = set()
    for (label, lang), quota in zip(cells, quotas, strict=True):
        module = _LANGUAGES[lang]
        templates = [
            (f"{lang}-{index:02d}", kind, text)
            for index, (wanted, kind, text) in enumerate(module.TEMPLATES)
            if wanted == label
        ]
        made, attempts = 0, 0
        while made < quota:
            attempts += 1
            if attempts > 200 * quota + 1000:
                raise ValueError(f"the {lang} {label} templates cannot give {quota} distinct questions")
            template_id, kind, template = rng.choice(templates)
            question = fill(template, module.SLOTS, rng)
            question = question[0].upper() + question[1:] if lang == "en" else question
            if question in seen:
                continue
            seen.add(question)
            made += 1
            examples.append(
                Example(
                    question=question,
                    label=label,
                    features=compute_features(question),
                    source="template",
                    kind=kind,
                    lang=lang,
                    extra={"template": template_id, **({"hard": True} if kind in HARD_KINDS else {})},
                )
            )
    rng.shuffle(examples)
    return examples

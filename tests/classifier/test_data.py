"""Classifier data: the JSONL format and its checks, the seeded 8/1/1 split, the template generator, the importers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.retrieval.complexity import extract_features
from multihop_classifier.data.examples import (
    DataError,
    Example,
    read_examples,
    split_examples,
    write_examples,
)
from multihop_classifier.data.generate import HARD_KINDS, generate
from multihop_classifier.data.importers import import_examples
from multihop_classifier.runs.training import load_training_data

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def test_examples_round_trip_through_jsonl(tmp_path: Path) -> None:
    """A written example reads back equal, Chinese text kept as UTF-8 (not escaped)."""
    example = Example(
        "北京和上海哪个大？", "multi", extract_features("北京和上海哪个大？").as_dict(), source="t"
    )
    path = tmp_path / "d.jsonl"
    write_examples(path, [example])
    assert read_examples(path) == [example]
    assert "北京" in path.read_text("utf-8")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"question": "q", "label": "maybe"}', "'label' must be 'single' or 'multi'"),
        ('{"question": "", "label": "single"}', "'question' must be a non-empty string"),
        ('{"question": "q", "label": "single", "features": {"tokens": 1}}', "missing comparison_markers"),
        ("[1, 2]", "a record must be a JSON object"),
        ("{not json", "not valid JSON"),
    ],
)
def test_a_bad_record_names_its_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    """Reading stops at the first bad record with the file, the line number and what is wrong."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "ok", "label": "single"}\n\n' + line + "\n", "utf-8")
    with pytest.raises(DataError, match=message) as caught:
        read_examples(path)
    assert f"{path}:3" in str(caught.value)


def test_the_split_is_8_1_1_per_label_and_seeded() -> None:
    """1,000 balanced examples split 400/50/50 per label; the same seed gives the same split, another seed not."""
    examples = [Example(f"q{i}", "multi" if i % 2 else "single") for i in range(1000)]
    split = split_examples(examples, seed=1)
    for part, size in ((split.train, 400), (split.validation, 50), (split.test, 50)):
        assert Counter(e.label for e in part) == {"multi": size, "single": size}
    assert split_examples(examples, seed=1) == split
    assert split_examples(examples, seed=2).test != split.test
    assert len({e.question for e in split.train + split.validation + split.test}) == 1000


def test_a_template_split_keeps_each_template_in_one_split() -> None:
    """With group_by="template" no template of the test split appears in training."""
    split = split_examples(generate(600, seed=3), seed=1, group_by="template")
    train = {e.extra["template"] for e in split.train}
    assert train.isdisjoint(e.extra["template"] for e in split.test)
    assert train.isdisjoint(e.extra["template"] for e in split.validation)
    assert 40 <= len(split.test) <= 80 and {e.label for e in split.test} == {"single", "multi"}


def test_the_generator_gives_1200_distinct_balanced_bilingual_examples_with_hard_cases() -> None:
    """The default seed set: 1,200 distinct questions, 300 per label and language, hard cases on both sides."""
    examples = generate()
    assert len(examples) == len({e.question for e in examples}) == 1200
    assert Counter((e.label, e.lang) for e in examples) == {
        ("multi", "zh"): 300,
        ("multi", "en"): 300,
        ("single", "zh"): 300,
        ("single", "en"): 300,
    }
    hard = Counter((e.label, e.kind) for e in examples if e.extra.get("hard"))
    assert {kind for _, kind in hard} == HARD_KINDS
    assert hard[("multi", "short_comparison")] >= 50 and hard[("single", "long_single")] >= 50
    long_single = [e for e in examples if e.kind == "long_single"]
    assert min(e.features["tokens"] for e in long_single if e.features) > 30
    short_comparison = [e for e in examples if e.kind == "short_comparison"]
    assert max(e.features["tokens"] for e in short_comparison if e.features) <= 20


def test_generated_features_are_the_routers_features_and_the_seed_repeats() -> None:
    """Each example carries exactly core's extractor output, and the same seed gives the same set."""
    examples = generate(40, seed=5)
    assert all(e.features == extract_features(e.question).as_dict() for e in examples)
    assert generate(40, seed=5) == examples and generate(40, seed=6) != examples


def test_the_importers_label_hotpotqa_multi_and_cmrc_single(tmp_path: Path) -> None:
    """IRCoT HotpotQA lines become multi (en), SQuAD-style CMRC questions single (zh); blanks are skipped."""
    hotpot = tmp_path / "hotpot.jsonl"
    hotpot.write_text(
        json.dumps({"question_id": "a1", "question_text": "Who directed the film that starred X?"})
        + "\n"
        + json.dumps({"question_id": "a2", "question_text": "  "})
        + "\n",
        "utf-8",
    )
    cmrc = tmp_path / "cmrc.json"
    qas = [
        {"id": "Q1", "question": "《战国无双3》是由哪两个公司合作开发的？"},
        {"id": "Q2", "question": "谁?"},
    ]
    cmrc.write_text(json.dumps({"data": [{"paragraphs": [{"context": "…", "qas": qas}]}]}), "utf-8")
    multi = import_examples("hotpotqa", hotpot)
    single = import_examples("cmrc", cmrc, limit=1, seed=1)
    assert [(e.label, e.lang, e.extra["source_id"]) for e in multi] == [("multi", "en", "a1")]
    assert len(single) == 1 and single[0].label == "single" and single[0].source == "cmrc"
    assert single[0].features == extract_features(single[0].question).as_dict()


def test_the_hotpotqa_validation_sample_imports_only_for_eval(tmp_path: Path) -> None:
    """The train-100 HotpotQA sample is reserved for validation: refused, or marked so and then refused by train."""
    reserved = tmp_path / "hotpotqa_train100_questions.json"
    reserved.write_text(json.dumps([{"_id": "x", "question": "Who is older, A or B?"}]), "utf-8")
    with pytest.raises(DataError, match="reserved for validation"):
        import_examples("hotpotqa", reserved)
    marked = import_examples("hotpotqa", reserved, validation_only=True)
    assert marked[0].extra["validation_only"] is True
    path = tmp_path / "marked.jsonl"
    write_examples(path, [*marked, *generate(40, seed=1)])
    with pytest.raises(DataError, match="never for training"):
        load_training_data([path])


@pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason="the shared evaluation data is not beside the repository"
)
def test_the_real_public_sets_import_in_place() -> None:
    """The shared HotpotQA dev-500 file gives 500 multi examples; CMRC dev gives a seeded sample of single ones."""
    hotpot = import_examples("hotpotqa", SHARED_DATA / "multihop_en" / "hotpotqa_dev500_ircot.jsonl")
    cmrc = import_examples("cmrc", SHARED_DATA / "zh_cmrc2018" / "cmrc2018_dev_squad_style.json", limit=50)
    assert len(hotpot) == 500 and {e.label for e in hotpot} == {"multi"}
    assert len(cmrc) == 50 and {e.label for e in cmrc} == {"single"}

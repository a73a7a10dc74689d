"""The review pass: keep / flip / drop answers appended at once, resumed on the next run, honoured by train."""

from __future__ import annotations

import io
from pathlib import Path

from multihop_classifier.data.examples import Example, read_examples, write_examples
from multihop_classifier.data.generate import generate
from multihop_classifier.data.review import pick_for_review, review
from multihop_classifier.runs.training import load_training_data


def _data(tmp_path: Path, count: int = 6) -> Path:
    path = tmp_path / "seed.jsonl"
    write_examples(path, generate(count, seed=2))
    return path


def test_answers_keep_flip_and_drop_and_quit_keeps_what_was_answered(tmp_path: Path) -> None:
    """Enter keeps, f flips the label, d drops; q stops and the three answers are already in the file."""
    data, out = _data(tmp_path), tmp_path / "reviewed.jsonl"
    source = read_examples(data)
    screen = io.StringIO()
    tally = review(data, out, sample=None, seed=1, stdin=io.StringIO("\nf\nd\nq\n"), stdout=screen)
    assert dict(tally) == {"kept": 1, "flipped": 1, "dropped": 1}
    written = read_examples(out)
    assert [e.extra["review"] for e in written] == ["kept", "flipped", "dropped"]
    assert written[0].label == source[0].label and written[1].label != source[1].label
    assert [e.reviewed for e in written] == [True, True, False]
    assert source[0].question in screen.getvalue() and "497 more for the 500" in screen.getvalue()


def test_a_second_run_resumes_after_the_last_answer(tmp_path: Path) -> None:
    """Questions answered before are not asked again; the end of input stops like q."""
    data, out = _data(tmp_path), tmp_path / "reviewed.jsonl"
    review(data, out, sample=None, seed=1, stdin=io.StringIO("\n\n"), stdout=io.StringIO())
    screen = io.StringIO()
    tally = review(data, out, sample=None, seed=1, stdin=io.StringIO("k\nbanana\n"), stdout=screen)
    assert dict(tally) == {"kept": 1} and "'banana' is not an answer" in screen.getvalue()
    assert len(read_examples(out)) == 3 and len({e.question for e in read_examples(out)}) == 3


def test_a_review_sample_is_balanced_and_train_leaves_dropped_examples_out(tmp_path: Path) -> None:
    """A sample of 4 from mixed data takes 2 per label; dropped examples never reach training."""
    examples = generate(40, seed=3)
    picked = pick_for_review(examples, set(), sample=4, seed=1)
    assert sorted(e.label for e in picked) == ["multi", "multi", "single", "single"]
    dropped = Example("dropped question", "single", extra={"review": "dropped"})
    path = tmp_path / "mixed.jsonl"
    write_examples(path, [*examples, dropped])
    assert "dropped question" not in {e.question for e in load_training_data([path])}

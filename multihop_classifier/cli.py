"""Command line of the classifier: generate, import, review, train, eval, export, predict, serve.

``python -m multihop_classifier COMMAND`` (or ``multihop-classifier``) and ``kb classifier COMMAND``
share these sub-commands. Known errors print one line (no traceback unless ``-v``) and exit 2.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from multihop_classifier import MAX_TOKENS

DEFAULT_PORT = 8600


def _generate(args: argparse.Namespace) -> int:
    from multihop_classifier.data.examples import write_examples
    from multihop_classifier.data.generate import generate

    examples = generate(args.count, seed=args.seed, languages=args.lang or ("zh", "en"))
    count = write_examples(args.out, examples)
    hard = sum(1 for example in examples if example.extra.get("hard"))
    print(f"wrote {count} examples ({hard} hard cases) to {args.out}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from multihop_classifier.data.examples import write_examples
    from multihop_classifier.data.importers import import_examples

    examples = import_examples(
        args.set, args.path, limit=args.limit, seed=args.seed, validation_only=args.validation_only
    )
    count = write_examples(args.out, examples)
    labels = ", ".join(f"{n} {label}" for label, n in sorted(Counter(e.label for e in examples).items()))
    eval_only = any(e.extra.get("validation_only") for e in examples)
    note = " (validation only: for eval --data, never train)" if eval_only else ""
    print(f"wrote {count} {args.set} examples ({labels or 'none'}) to {args.out}{note}")
    return 0


def _review(args: argparse.Namespace) -> int:
    from multihop_classifier.data.review import review

    review(args.data, args.out, sample=args.sample, seed=args.seed, stdin=sys.stdin, stdout=sys.stdout)
    return 0


def _train(args: argparse.Namespace) -> int:
    from multihop_classifier.model.encoders import UseEncoder
    from multihop_classifier.model.encoding import Encoder
    from multihop_classifier.model.head import HeadConfig
    from multihop_classifier.runs.training import TrainOptions, train

    encoder: Encoder
    if args.encoder == "bert":
        from multihop_classifier.model.bert import BertEncoder

        if args.encoder_path is None:
            raise SystemExit("error: --encoder bert needs --encoder-path DIR (a local BERT/RoBERTa model)")
        encoder = BertEncoder(args.encoder_path, max_tokens=args.max_tokens)
    else:
        encoder = UseEncoder(max_tokens=args.max_tokens)
    head = HeadConfig(hidden=args.hidden, epochs=args.epochs, patience=args.patience, seed=args.seed)
    options = TrainOptions(
        seed=args.seed,
        head=head,
        max_tokens=args.max_tokens,
        recall_target=args.recall_target,
        recompute_features=args.recompute_features,
        split=args.split,
    )
    train(args.data, args.out, encoder=encoder, options=options)
    return 0


def _eval(args: argparse.Namespace) -> int:
    from multihop_classifier.model.classifier import load_model, resolve_model_dir
    from multihop_classifier.runs.evaluation import evaluate

    run = resolve_model_dir(args.model)
    model = load_model(run, encoder_path=args.encoder_path)
    test_split = run / "splits" / "test.jsonl"
    data = args.data or test_split
    # Other data never overwrites the run's own metrics (the ones export ships): it gets its own folder.
    out = args.out or (run if data == test_split else run / f"eval-{data.stem}")
    held_back = data.resolve() == test_split.resolve()
    report = evaluate(
        model, data, out=out, held_back=held_back, log=lambda line: None if args.json else print(line)
    )
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    return 0


def _export(args: argparse.Namespace) -> int:
    from multihop_classifier.runs.export import export_model

    target = export_model(args.run, args.out)
    print(f"exported {target.name} to {target} (LATEST updated)")
    return 0


def _predict(args: argparse.Namespace) -> int:
    from multihop_classifier.model.classifier import load_model

    model = load_model(args.model_dir, encoder_path=args.encoder_path)
    for question, prediction in zip(args.question, model.predict(args.question), strict=True):
        record = {
            "question": question,
            "label": prediction.label,
            "multi_hop_probability": prediction.probability,
        }
        print(json.dumps({**record, "features": prediction.features}, ensure_ascii=False))
    return 0


def _serve(args: argparse.Namespace) -> int:
    from multihop_classifier.service import serve

    logging.getLogger("multihop_classifier").setLevel(logging.INFO)
    return serve(
        args.model_dir,
        host=args.host,
        port=args.port,
        encoder_path=args.encoder_path,
        max_batch=args.max_batch,
    )


def _command(commands: Any, name: str, run: Callable[[argparse.Namespace], int], **kwargs: Any) -> Any:
    parser = commands.add_parser(name, **kwargs)
    parser.set_defaults(classifier_run=run)
    return parser


def add_commands(commands: Any) -> None:
    """Add the classifier's sub-commands to an argparse sub-parsers object."""
    parser = _command(commands, "generate", _generate, help="write template seed data (zh + en) as JSONL")
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    parser.add_argument("--count", type=int, default=1200, help="number of examples (default 1200, balanced)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument("--lang", action="append", choices=("zh", "en"), help="repeat for both (default)")

    parser = _command(
        commands, "import", _import, help="label a public set: hotpotqa -> multi, cmrc -> single"
    )
    parser.add_argument(
        "set", choices=("hotpotqa", "cmrc", "kb-eval"), help="kb-eval: a `kb eval` set, eval-only"
    )
    parser.add_argument("path", type=Path, help="the set's file, read in place")
    parser.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    parser.add_argument("--limit", type=int, help="sample at most this many questions (seeded)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    parser.add_argument(
        "--validation-only", action="store_true", help="mark the examples eval-only (train refuses them)"
    )

    parser = _command(commands, "review", _review, help="review examples by hand: keep, flip or drop each")
    parser.add_argument("--data", type=Path, required=True, help="JSONL to review")
    parser.add_argument("--out", type=Path, required=True, help="reviewed JSONL (appended; resumes)")
    parser.add_argument("--sample", type=int, help="review a balanced seeded sample of this many")
    parser.add_argument("--seed", type=int, default=7, help="random seed (default 7)")

    parser = _command(commands, "train", _train, help="train on JSONL data (8/1/1 split, 5 epochs, seeded)")
    parser.add_argument("--data", type=Path, action="append", required=True, help="JSONL file (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="run directory to write")
    parser.add_argument("--encoder", choices=("use", "bert"), default="use", help="default: offline USE")
    parser.add_argument(
        "--encoder-path", type=Path, help="local BERT/RoBERTa directory (with --encoder bert)"
    )
    parser.add_argument(
        "--seed", type=int, default=13, help="random seed for the split and training (default 13)"
    )
    parser.add_argument("--epochs", type=int, default=5, help="training epochs (default 5)")
    parser.add_argument("--patience", type=int, default=2, help="epochs without a better validation F1")
    parser.add_argument("--hidden", type=int, default=64, help="hidden units of the head (0 = logistic)")
    parser.add_argument(
        "--max-tokens", type=int, default=MAX_TOKENS, help="questions are cut to this many tokens"
    )
    parser.add_argument("--recall-target", type=float, default=0.85, help="multi-hop recall on validation")
    parser.add_argument("--recompute-features", action="store_true", help="ignore features in the data")
    parser.add_argument(
        "--split",
        choices=("random", "template"),
        default="random",
        help="random 8/1/1 (default), or whole templates per split to measure unseen wording",
    )

    parser = _command(commands, "eval", _eval, help="metrics table, metrics.json and roc.png for a model")
    parser.add_argument("--model", type=Path, required=True, help="run or exported model directory")
    parser.add_argument("--data", type=Path, help="JSONL to score (default: the run's held-back test split)")
    parser.add_argument("--out", type=Path, help="where metrics.json and roc.png go (default: the model)")
    parser.add_argument("--encoder-path", type=Path, help="where the BERT backbone is mounted now")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON instead of the table")

    parser = _command(commands, "export", _export, help="copy an evaluated run to OUT/<model_version>/")
    parser.add_argument("--run", type=Path, required=True, help="the training run folder to export")
    parser.add_argument("--out", type=Path, required=True, help="folder of versioned models")

    parser = _command(commands, "predict", _predict, help="classify questions locally, one JSON line each")
    parser.add_argument("question", nargs="+", help="one or more questions to classify")
    parser.add_argument(
        "--model-dir", type=Path, required=True, help="exported model (or folder of versions)"
    )
    parser.add_argument("--encoder-path", type=Path, help="where the BERT backbone is mounted")

    parser = _command(commands, "serve", _serve, help="run the HTTP service: POST /predict, GET /health")
    parser.add_argument(
        "--model-dir", type=Path, required=True, help="exported model (or folder of versions)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    parser.add_argument("--encoder-path", type=Path, help="where the BERT backbone is mounted")
    parser.add_argument("--max-batch", type=int, default=64, help="most questions in one batch request")


def run(args: argparse.Namespace, *, usage: Callable[[], None]) -> int:
    """Run the chosen sub-command; a known error prints one line and returns 2."""
    from multihop_classifier.data.examples import DataError
    from multihop_classifier.model.classifier import ModelMissing
    from multihop_classifier.model.encoding import EncoderUnavailable
    from multihop_classifier.runs.export import ExportError

    command: Callable[[argparse.Namespace], int] | None = getattr(args, "classifier_run", None)
    if command is None:
        usage()
        return 2
    try:
        return command(args)
    except (DataError, ModelMissing, ExportError, EncoderUnavailable, ValueError) as exc:
        if getattr(args, "verbose", False):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    """The standalone parser of ``python -m multihop_classifier``."""
    parser = argparse.ArgumentParser(prog="multihop-classifier", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and debug logs")
    add_commands(parser.add_subparsers(metavar="COMMAND"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m multihop_classifier`` and the ``multihop-classifier`` script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, stream=sys.stderr)
    return run(args, usage=parser.print_help)

"""The `kb` command line's own user-facing text in English, by key (the same keys as zh.py)."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # the error path (bot/cli/outcome.py)
    "interrupted": "interrupted",
    "interrupted_record": "interrupted; record {record} marked interrupted — `kb ask --again {record}` to retry",
    "internal_error": "error: internal error ({detail}); run with -v for the traceback.",
    # bad input and unknown names
    "error.home_is_a_file": "KB_HOME {path} is a file, not a folder: point KB_HOME at a folder.",
    "error.home_under_a_file": "KB_HOME {path} cannot be created: a part of that path is a file.",
    "error.home_not_writable": "KB_HOME {path} is not writable: choose a folder you can write to.",
    "error.home_os_error": "KB_HOME {path} cannot be used: {detail}.",
    "error.name_a_dataset": "Name a dataset with --dataset (or set KB_DATASETS); available: {known}",
    "error.empty_dataset_name": "The dataset name must not be empty.",
    "error.no_such_path": "No such file or folder: {names}",
    "error.ingested_with_other_model": (
        "Dataset '{dataset}' was built with {built_with}; it cannot be ingested with {model}."
    ),
    "error.ambiguous_document": "Several documents are named '{key}'; use an id: {ids}",
    "error.no_such_document": "No document '{key}' in this dataset.",
    "error.bad_conversation_name": "A conversation name must be non-empty and have no colon.",
    "error.conversation_and_name": "Give either --conversation or --name, not both.",
    "error.no_such_dataset": "No such dataset: {unknown} (available: {available})",
    "error.no_dataset_yet": "There is no dataset yet: add documents with `kb ingest PATH --dataset NAME` first.",
    "error.rebuild_failed": (
        "Dataset {dataset} could not be rebuilt: {reason} Drop it with `kb datasets drop {name}` and ingest "
        "its files again."
    ),
    "error.record_elsewhere": "Record {record} belongs to conversation {conversation}, not {named}.",
    "error.again_with_question": "--again answers the record's stored question again; give no question with it.",
    # `kb trace`: the rewrite and the context line
    "trace.rewritten": "rewritten: {rewritten}",
    "trace.attribution.corrected": "citation corrected to {where}: “{sentence}”",
    "trace.attribution.added": "citation {where} added: “{sentence}”",
    "trace.attribution.removed": "citation removed, no paragraph supports: “{sentence}”",
    "trace.attribution.none": "no paragraph supports: “{sentence}”",
    "trace.attribution.by_meaning": " (by meaning, similarity {similarity})",
    "trace.supplied": "quoted {where} for “{part}”, which the answer left out: “{sentence}”",
    "trace.unsupported.number": "no source states the figure {claim} — in “{sentence}”",
    "trace.unsupported.name": "no source names {claim} — in “{sentence}”",
    "context.disabled": "context: history disabled",
    "context.line": "context: {parts}",
    "context.recent": "{recent} recent turns",
    "context.compacted": "{compacted} in the summary",
    "context.tokens": "~{tokens} of {budget} tokens",
    "context.compacted_now": "compacted for this question",
    "context.compaction_failed": "compaction failed: {error}",
}

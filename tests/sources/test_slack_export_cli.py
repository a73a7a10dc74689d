"""`kb sources` over a Slack export zip, as subprocesses: threads become documents with their permalinks,
`kb ask` cites the thread's link, a second sync of the same export changes nothing, a newer export updates
the edited thread and removes the deleted one."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.cli_support import clean_env, kb
from tests.sources.slack_export_zip import message, threaded, write_export

VPN_ROOT = message("U1", "1767600000.000100", "How do I get VPN access from home?")
VPN_REPLIES = [
    message(
        "U2", "1767600060.000200", "Request it in the IT portal under Network, then install GlobalProtect."
    ),
    message("UB", "1767600070.000300", "I found an answer in the handbook.", bot_id="B1"),
]
LUNCH = message("U2", "1767700000.000100", "The canteen on floor 3 closes at 14:00 on Fridays.")
LINK = "https://acme.slack.com/archives/C100/p1767600000000100"


def _export(path: Path, *, vpn_reply: str, with_lunch: bool) -> Path:
    replies = [{**VPN_REPLIES[0], "text": vpn_reply}, VPN_REPLIES[1]]
    messages = threaded(VPN_ROOT, replies) + ([LUNCH] if with_lunch else [])
    return write_export(path, {("C100", "it-help"): messages})


def test_an_export_syncs_into_cited_thread_documents_and_follows_a_newer_export(tmp_path: Path) -> None:
    """Sync reports new / unchanged / changed / removed like kb ingest; the answer cites the thread's link;
    bot replies are left out of the document; the edited reply's new text is what the answer quotes."""
    env = clean_env(tmp_path / "home")
    export = _export(tmp_path / "export.zip", vpn_reply=VPN_REPLIES[0]["text"], with_lunch=True)
    added = kb(
        env,
        "sources",
        "add",
        "it-export",
        "--kind",
        "slack-export",
        "--path",
        str(export),
        "--dataset",
        "slack",
        "--workspace-url",
        "https://acme.slack.com",
    )
    assert added.returncode == 0, added.stderr
    first = kb(env, "sources", "sync", "it-export")
    assert first.returncode == 0, first.stderr
    assert "documents: 2 new, 0 changed, 0 unchanged, 0 removed, 0 skipped" in first.stdout
    assert "ingest: 2 files" in first.stderr  # the progress kb ingest shows

    asked = kb(env, "ask", "how do I get VPN access?", "--dataset", "slack", "--json")
    assert asked.returncode == 0, asked.stderr
    record = json.loads(asked.stdout)
    assert "GlobalProtect" in record["answer"]
    assert LINK in [c["source"] for c in record["details"]["citations"]]
    found = kb(env, "search", "handbook answer", "--dataset", "slack", "--json")
    assert "I found an answer in the handbook" not in found.stdout

    again = kb(env, "sources", "sync", "it-export")
    assert "documents: 0 new, 0 changed, 2 unchanged, 0 removed, 0 skipped" in again.stdout, again.stdout

    _export(
        export, vpn_reply="Request it in the IT portal, then install the WireGuard client.", with_lunch=False
    )
    newer = kb(env, "sources", "sync", "it-export")
    assert "documents: 0 new, 1 changed, 0 unchanged, 1 removed, 0 skipped" in newer.stdout, newer.stdout
    answer = json.loads(kb(env, "ask", "how do I get VPN access?", "--dataset", "slack", "--json").stdout)[
        "answer"
    ]
    assert "WireGuard" in answer and "GlobalProtect" not in answer
    listed = json.loads(kb(env, "sources", "list", "--json").stdout)
    assert (listed[0]["documents"], listed[0]["last_sync"]["changed"]) == (1, 1)


def test_bad_source_settings_are_one_line_errors_that_register_nothing(tmp_path: Path) -> None:
    """A missing export, a missing channel, an unknown kind, a bad schedule and an unknown source each
    exit 2 with one error line; nothing is registered."""
    env = clean_env(tmp_path / "home")
    cases = [
        ("add", "x", "--kind", "slack-export", "--path", str(tmp_path / "none.zip"), "--dataset", "d"),
        ("add", "x", "--kind", "slack-channel", "--dataset", "d"),
        ("add", "x", "--kind", "slack-export", "--path", __file__, "--dataset", "d", "--every", "soon"),
        ("add", "bad name", "--kind", "slack-channel", "--channel", "C1", "--dataset", "d"),
        ("sync", "nothing-here"),
    ]
    for case in cases:
        result = kb(env, "sources", *case)
        assert result.returncode == 2, (case, result.stdout, result.stderr)
        assert result.stderr.count("error:") == 1 and "Traceback" not in result.stderr, result.stderr
    assert kb(env, "sources", "list").stdout.startswith("no sources")

"""`kb ingest` and `kb search` as subprocesses: a Markdown file's metadata gives its title and is never
indexed; attribute lists leave headings; a heading deep in a file is not its title."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.knowledge.readers.text import markdown_title, read_markdown
from tests.cli.cli_support import clean_env, kb

MKDOCS = "title: Deploying the site\nsummary: how we publish\n\n# Publishing {: #publish }\n\nRun mkdocs gh-deploy.\n"
YAML = "---\ntitle: Expense policy\nauthor: Finance\n---\n\nReceipts are kept for five years.\n"
DEEP = (
    "Receipts and invoices are scanned.\n\n" + "More text.\n\n" * 50 + "### Appendix {#appendix}\n\nNotes.\n"
)


def hits(env: dict[str, str], query: str) -> list[dict[str, object]]:
    result = kb(env, "search", query, "--dataset", "t", "--json")
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    return found if isinstance(found, list) else found["hits"]


def test_metadata_titles_the_document_and_is_not_indexed(tmp_path: Path) -> None:
    """MkDocs `title:` and YAML front matter name the document; their lines are not in any chunk; the
    `{: #id }` of a heading is gone; a file whose only heading is deep inside is titled by its name."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in (("deploy.md", MKDOCS), ("expenses.md", YAML), ("scanning.md", DEEP)):
        (folder / name).write_text(text, encoding="utf-8")
    env = clean_env(tmp_path / "home")
    assert kb(env, "ingest", str(folder), "--dataset", "t").returncode == 0
    top = hits(env, "mkdocs gh-deploy publish")[0]
    assert (top["title"], top["heading"], top["content"]) == (
        "Deploying the site",
        "Publishing",
        "Run mkdocs gh-deploy.",
    )
    expenses = hits(env, "receipts kept five years")[0]
    assert expenses["title"] == "Expense policy" and "author" not in str(expenses["content"])
    scanning = next(hit for hit in hits(env, "receipts invoices scanned") if hit["document"] == "scanning")
    assert scanning["title"] == "scanning"
    assert (
        kb(env, "search", "summary publish", "--dataset", "t", "--mode", "keywords").stdout.count(
            "how we publish"
        )
        == 0
    )


def test_a_first_line_that_only_looks_like_metadata_stays_text() -> None:
    """ "Note: ..." is not a metadata key: the line is kept, and the first H1 titles the file."""
    parsed = read_markdown("Note: the office is closed on Friday.\n\n# Office hours\n\nNine to five.\n")
    assert parsed.parts[0].markdown.startswith("Note: the office is closed")
    assert (
        read_markdown(MKDOCS)
        .parts[0]
        .markdown.startswith("---\ntitle: Deploying the site\nsummary: how we publish\n---\n")
    )
    assert parsed.title == "Office hours"
    assert markdown_title("## Setup {: .wide }\n\nInstall it.\n") == "Setup"

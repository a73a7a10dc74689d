"""Documents a paragraph names by title are found in the order it names them, in every process."""

from __future__ import annotations

from adapters.knowledge.chroma.catalog import CatalogEntry
from adapters.knowledge.chroma.references import TitleIndex
from core.models import DocumentInfo

TITLES = [
    "Northern Lights Archive",
    "Ada Lindqvist",
    "Harbour Street Station",
    "Blue Hall Records",
    "Tromso Film Festival",
    "Oslo Night Train",
]


def entry(title: str) -> CatalogEntry:
    info = DocumentInfo("films", title.lower().replace(" ", "-"), f"{title}.md", f"/{title}.md", "h", True, 1)
    return CatalogEntry(info, "v1", title)


def test_mentioned_titles_come_in_the_order_the_text_names_them() -> None:
    """Six titles named in a paragraph come back first-named first (not in the hash order of a set, which
    differs from process to process and made the evidence, and so the citation numbers, vary between runs)."""
    index = TitleIndex.of(entry(title) for title in reversed(TITLES))
    text = (
        "The Northern Lights Archive, directed by Ada Lindqvist, was shot at Harbour Street Station; its score "
        "came out on Blue Hall Records, it opened the Tromso Film Festival and was shown on the Oslo Night Train."
    )
    assert [found.title for found in index.mentioned_in(text)] == TITLES

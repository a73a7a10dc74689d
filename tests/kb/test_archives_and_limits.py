"""Zip archives (wiki exports) read member by member, and the limits that refuse big files and zip bombs."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from adapters.knowledge.document_readers import (
    ReadLimits,
    UnreadableDocument,
    iter_document_paths,
    read_document,
)
from tests.kb.document_files import docx_bytes, handbook_pages, pdf_bytes, write, zip_bytes

EXPORT = {
    "Engineering/Onboarding.html": b"<title>Eng : Onboarding</title><h1>Onboarding</h1><p>Get a laptop.</p>",
    "Engineering/Deploy.md": b"# Deploying\n\nRun make deploy.\n",
    "HR/handbook.pdf": b"",  # filled below
    "HR/policy.docx": b"",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n",
    "__MACOSX/HR/._policy.docx": b"junk",
    ".hidden.md": b"# hidden",
    "../escape.md": b"# outside",
    "/abs.md": b"# absolute",
    "nested.zip": b"PK\x05\x06" + b"\x00" * 18,
}


def export_zip() -> bytes:
    members = dict(EXPORT)
    members["HR/handbook.pdf"] = pdf_bytes(handbook_pages(), title="员工手册")
    members["HR/policy.docx"] = docx_bytes()
    return zip_bytes(members)


def reason_for(path: Path, limits: ReadLimits | None = None) -> str:
    with pytest.raises(UnreadableDocument) as caught:
        read_document(path, limits=limits or ReadLimits())
    return caught.value.reason


def test_a_zip_stands_for_its_documents_named_by_their_paths(tmp_path: Path) -> None:
    """Walking an export yields its members under the zip's path, in order: the documents read with their
    path in the archive as name and their own title; the others (an image, a nested zip) each say why they
    are not read; names leaving the archive are refused by name; hidden files and __MACOSX are passed over."""
    archive = write(tmp_path / "kb" / "export.zip", export_zip())
    refused: list[tuple[str, str]] = []
    found = list(iter_document_paths([tmp_path / "kb"], on_refused=lambda *line: refused.append(line)))
    assert [p.relative_to(archive).as_posix() for p in found] == [
        "Engineering/Deploy.md",
        "Engineering/Onboarding.html",
        "HR/handbook.pdf",
        "HR/policy.docx",
        "assets/logo.png",
        "nested.zip",
    ]
    assert refused == [
        (f"{archive}: ../escape.md", "refused: its name would leave the archive's folder"),
        (f"{archive}: /abs.md", "refused: its name would leave the archive's folder"),
    ]
    assert reason_for(found[4]) == "binary file (a PNG image)"
    assert reason_for(found[5]) == "a ZIP archive inside an archive is not read"
    found = found[:4]
    docs = [read_document(path) for path in found]
    assert [(d.name, d.title) for d in docs] == [
        ("Engineering/Deploy.md", "Deploying"),
        ("Engineering/Onboarding.html", "Eng : Onboarding"),
        ("HR/handbook.pdf", "员工手册"),
        ("HR/policy.docx", "员工手册"),
    ]
    assert docs[2].parts[2].location.page == 3
    assert list(iter_document_paths([archive]))[:4] == found  # given directly, the same


def test_an_archive_never_reads_outside_itself(tmp_path: Path) -> None:
    """Members named '../x' or '/x' are never yielded, so a walk cannot reach a file beside the zip."""
    write(tmp_path / "escape.md", "# outside the archive")
    archive = write(tmp_path / "kb" / "evil.zip", zip_bytes({"../../escape.md": b"# evil", "ok.md": b"# ok"}))
    assert [p.name for p in iter_document_paths([archive])] == ["ok.md"]


def test_a_refused_archive_is_yielded_itself_and_says_why(tmp_path: Path) -> None:
    """A corrupt zip, or one with nothing readable, comes out of the walk as itself; reading it gives the reason."""
    corrupt = write(tmp_path / "a" / "broken.zip", b"PK\x03\x04 this is not a zip")
    empty = write(tmp_path / "a" / "pictures.zip", zip_bytes({"a.png": b"\x89PNG"}))
    assert list(iter_document_paths([tmp_path / "a"])) == [corrupt, empty]
    assert reason_for(corrupt).startswith("corrupt file (a damaged ZIP container")
    assert reason_for(empty) == "the archive holds no supported documents"


def test_a_zip_bomb_is_refused_by_ratio_and_by_total_size(tmp_path: Path) -> None:
    """A member unpacking to over 100 times its packed size, or an archive unpacking past the total
    limit, is refused before anything is unpacked."""
    bomb = write(tmp_path / "bomb.zip", zip_bytes({"zeros.txt": b"0" * (4 * 1024 * 1024), "ok.md": b"# ok"}))
    assert [p for p in iter_document_paths([bomb])] == [bomb]
    assert "unpacks" in reason_for(bomb) and "a zip bomb?" in reason_for(bomb)
    stored = write(tmp_path / "big.zip", zip_bytes({"a.md": b"# a\n" * 4000}, compression=zipfile.ZIP_STORED))
    small = ReadLimits(max_archive_bytes=1000)
    assert list(iter_document_paths([stored], limits=small)) == [stored]
    assert reason_for(stored, small) == "refused: the archive unpacks to 16 KB (at most 1 KB; a zip bomb?)"


def test_office_files_are_zip_checked_too(tmp_path: Path) -> None:
    """A .docx is a zip: the same unpacked-size limit refuses one that would unpack too far."""
    path = write(tmp_path / "policy.docx", docx_bytes())
    assert reason_for(path, ReadLimits(max_archive_bytes=10_000)).startswith(
        "refused: the Word document unpacks to"
    )


def test_encrypted_members_and_oversized_files_are_refused_with_their_reason(tmp_path: Path) -> None:
    """An encrypted archive member is skipped as password-protected; a file over the size limit is refused
    with its size before it is read."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("open.md", "# open")
        archive.writestr("secret.md", "# secret")
    raw = bytearray(buffer.getvalue())
    for marker in (b"PK\x03\x04", b"PK\x01\x02"):  # set the "encrypted" flag of the second member
        at = raw.find(marker, raw.find(marker) + 1)
        flag = at + (6 if marker == b"PK\x03\x04" else 8)
        raw[flag] |= 0x1
    archive_path = write(tmp_path / "mixed.zip", bytes(raw))
    members = list(iter_document_paths([archive_path]))
    assert [p.name for p in members] == ["open.md", "secret.md"]
    assert read_document(members[0]).title == "open"
    assert reason_for(members[1]) == "password-protected (an encrypted member of the archive)"
    big = write(tmp_path / "big.txt", "x" * 3000)
    assert (
        reason_for(big, ReadLimits(max_file_bytes=2048))
        == "too large (3 KB; the limit is 2 KB, KB_MAX_FILE_MB)"
    )


async def test_members_removed_from_an_archive_are_pruned_and_unchanged_ones_kept(tmp_path: Path) -> None:
    """Re-ingesting an export writes nothing for unchanged members and, with prune, deletes the
    documents of members the new export no longer has."""
    from core.knowledge.ingest import ingest
    from core.knowledge.ingest_plan import IngestSummary
    from tests.kb.kb_support import CountingEmbedder, make_kb

    folder = tmp_path / "kb"
    archive = write(folder / "export.zip", zip_bytes({"a.md": b"# A\n\nalpha", "b.md": b"# B\n\nbeta"}))
    index = make_kb(tmp_path / "home", CountingEmbedder("bag", 16))

    async def run() -> IngestSummary:
        paths = list(iter_document_paths([folder]))
        return await ingest(
            index,
            "ds",
            paths,
            read=read_document,
            embedding_model="bag",
            roots=[folder],
            prune=True,
            unreadable=(UnreadableDocument,),
        )

    first = await run()
    assert (first.added, first.chunks_added) == (2, 2)
    write(archive, zip_bytes({"a.md": b"# A\n\nalpha"}))
    second = await run()
    assert (second.unchanged, second.removed, second.chunks_added) == (1, 1, 0)
    assert [doc.name for doc in await index.list_documents("ds")] == ["a.md"]
    await index.close()

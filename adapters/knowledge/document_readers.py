"""The document-reader seam: files (and members of zip archives) read into documents, and folder walks.

The reader is chosen by content, not only by name: a file starting ``%PDF-`` is read as a PDF, a zip
holding ``word/document.xml`` as a Word document, whatever they are called; text is then read by its
suffix (Markdown, HTML, CSV/TSV, plain text). A zip archive is not a document: walking it yields its
members as paths under it (``export.zip/Space/Page.html``), each read on its own and named by its path
in the archive. Formats and libraries live in adapters.knowledge.readers, one module per format.

A file over ReadLimits.max_file_bytes is refused with its size before it is read; every refusal is an
UnreadableDocument with a reason, raised before anything is written, so a failing file leaves nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from adapters.knowledge.readers.archive import (
    LEAVES_THE_ARCHIVE,
    archive_members,
    check_zip_bytes,
    list_archive,
    read_member,
)
from adapters.knowledge.readers.base import DEFAULT_LIMITS, Parsed, ReadFailed, ReadLimits, megabytes
from adapters.knowledge.readers.html import html_to_markdown, read_html
from adapters.knowledge.readers.pdf import read_pdf
from adapters.knowledge.readers.sheets import read_csv, read_xlsx
from adapters.knowledge.readers.slides import read_pptx
from adapters.knowledge.readers.sniff import ZIP_MAGICS, Kind, sniff, zip_kind
from adapters.knowledge.readers.text import decode_text, markdown_title, read_markdown, read_plain
from adapters.knowledge.readers.word import read_docx
from core.models import DocumentPart

__all__ = [
    "DEFAULT_LIMITS",
    "SUPPORTED_SUFFIXES",
    "ReadDocument",
    "ReadLimits",
    "UnreadableDocument",
    "content_hash",
    "html_to_markdown",
    "iter_document_paths",
    "markdown_title",
    "read_document",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
PLAIN_SUFFIXES = frozenset({".txt", ".text"})
CSV_SUFFIXES = frozenset({".csv", ".tsv"})
TEXT_SUFFIXES = MARKDOWN_SUFFIXES | HTML_SUFFIXES | PLAIN_SUFFIXES | CSV_SUFFIXES
# What each binary format's files are called (read by content all the same).
FORMAT_SUFFIXES: dict[str, frozenset[str]] = {
    "pdf": frozenset({".pdf"}),
    "docx": frozenset({".docx", ".docm"}),
    "pptx": frozenset({".pptx", ".pptm"}),
    "xlsx": frozenset({".xlsx", ".xlsm"}),
}
FORMAT_NAMES = {"pdf": "PDF", "docx": "Word document", "pptx": "PowerPoint deck", "xlsx": "Excel workbook"}
ARCHIVE_SUFFIXES = frozenset({".zip"})
DOCUMENT_SUFFIXES: frozenset[str] = TEXT_SUFFIXES.union(*FORMAT_SUFFIXES.values())
SUPPORTED_SUFFIXES: frozenset[str] = DOCUMENT_SUFFIXES | ARCHIVE_SUFFIXES
_NAMED_BY_STEM = MARKDOWN_SUFFIXES | HTML_SUFFIXES | PLAIN_SUFFIXES  # as before: "guide", not "guide.md"
_SNIFF_BYTES = 8


class UnreadableDocument(Exception):
    """A file that cannot be read as a document; reason says why in plain words."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class ReadDocument:
    """A file read into parts (pages, slides, rows, or its whole text as Markdown)."""

    path: Path
    name: str
    title: str
    parts: tuple[DocumentPart, ...]
    content_hash: str
    warnings: tuple[str, ...] = ()
    link: str = ""

    @property
    def markdown(self) -> str:
        """The whole text as Markdown (parts joined by blank lines)."""
        return "\n\n".join(part.markdown for part in self.parts)


def _read_file(path: Path, limits: ReadLimits) -> bytes:
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise IsADirectoryError(path)
        if size > limits.max_file_bytes:
            raise UnreadableDocument(
                path,
                f"too large ({megabytes(size)}; the limit is {megabytes(limits.max_file_bytes)}, KB_MAX_FILE_MB)",
            )
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise UnreadableDocument(path, "file not found") from exc
    except PermissionError as exc:
        raise UnreadableDocument(path, "permission denied") from exc
    except IsADirectoryError as exc:
        raise UnreadableDocument(path, "is a directory") from exc
    except OSError as exc:
        raise UnreadableDocument(path, f"cannot read the file ({exc.strerror or exc})") from exc


def _archive_of(path: Path) -> tuple[Path, str] | None:
    """(archive, member) when path names a member inside an existing zip file, else None."""
    for parent in path.parents:
        if parent.is_file():
            member = PurePosixPath(*path.relative_to(parent).parts).as_posix()
            return parent, member
        if parent.exists():
            return None
    return None


def parse(data: bytes, *, name: str, limits: ReadLimits = DEFAULT_LIMITS, kind: Kind | None = None) -> Parsed:
    """The document in data (called name), read by its content (kind, when already sniffed), then, for
    text, by its suffix; raises ReadFailed."""
    suffix = PurePosixPath(name).suffix.lower()
    if not data:  # a 0-byte file of any type is empty, not a damaged PDF or workbook
        return Parsed((DocumentPart(""),))
    kind = kind or sniff(data)
    if kind in FORMAT_NAMES:
        parsed = _parse_binary(data, kind, limits)
        if not any(part.markdown.strip() for part in parsed.parts) and not parsed.warnings:
            note = f"no text in this {FORMAT_NAMES[kind]} (it may hold only pictures or empty pages)"
            parsed = dataclasses.replace(parsed, warnings=(note,))
        return parsed
    if kind == "zip":
        raise ReadFailed("a ZIP archive inside an archive is not read")
    return _parse_text(data, name, suffix)


def _parse_binary(data: bytes, kind: Kind, limits: ReadLimits) -> Parsed:
    """A PDF or an Office file, by the library that reads its kind."""
    if kind == "pdf":
        return read_pdf(data)
    if kind in ("docx", "pptx", "xlsx"):
        check_zip_bytes(data, limits, what=FORMAT_NAMES[kind])
    return {"docx": read_docx, "pptx": read_pptx, "xlsx": read_xlsx}[kind](data)


def _parse_text(data: bytes, name: str, suffix: str) -> Parsed:
    """A text file by its suffix (a binary format's suffix on text is refused as not that format)."""
    for other, suffixes in FORMAT_SUFFIXES.items():
        if suffix in suffixes:
            raise ReadFailed(f"not a {FORMAT_NAMES[other]} (its content does not start like one)")
    if suffix not in TEXT_SUFFIXES:
        supported = " ".join(sorted(SUPPORTED_SUFFIXES))
        raise ReadFailed(f"unsupported file type '{suffix or name}' ({supported})")
    text = decode_text(data)
    if suffix in HTML_SUFFIXES:
        return read_html(text)
    if suffix in MARKDOWN_SUFFIXES:
        return read_markdown(text)
    if suffix in CSV_SUFFIXES:
        return read_csv(text, tab_separated=suffix == ".tsv")
    return read_plain(text)


def read_document(path: Path, *, limits: ReadLimits = DEFAULT_LIMITS) -> ReadDocument:
    """Read one file or archive member; raises UnreadableDocument with a reason (an empty file is fine)."""
    inside = None if path.exists() else _archive_of(path)
    try:
        if inside is not None:
            archive, member = inside
            data = read_member(archive, member, limits)
            name = member
        else:
            data = _read_file(path, limits)
            name = path.name
        kind = sniff(data)
        if kind == "zip" and inside is None:
            archive_members(path, limits, is_wanted)  # raises the archive's own reason
            raise ReadFailed("a ZIP archive: its documents are read one by one")
        parsed = parse(data, name=name, limits=limits, kind=kind)
    except ReadFailed as exc:
        raise UnreadableDocument(path, exc.reason) from exc
    if PurePosixPath(name).suffix.lower() in _NAMED_BY_STEM and inside is None:
        name = path.stem
    return ReadDocument(
        path=path,
        name=name,
        title=parsed.title or PurePosixPath(name).stem,
        parts=parsed.parts,
        content_hash=hashlib.sha256(data).hexdigest(),
        warnings=parsed.warnings,
        link=parsed.link,
    )


def content_hash(path: Path, *, limits: ReadLimits = DEFAULT_LIMITS) -> str:
    """The sha256 read_document records for path, from its bytes alone (no parsing), so an unchanged file
    is recognised before it is parsed; "" when the bytes cannot be read (read_document then says why)."""
    try:
        inside = None if path.exists() else _archive_of(path)
        if inside is not None:
            return hashlib.sha256(read_member(*inside, limits)).hexdigest()
        if path.stat().st_size > limits.max_file_bytes:
            return ""
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except (ReadFailed, OSError):
        return ""


def is_wanted(name: str) -> bool:
    """Whether an archive member is read as a document (by its suffix; archives in archives are not)."""
    return PurePosixPath(name).suffix.lower() in DOCUMENT_SUFFIXES


def _is_hidden(name: str) -> bool:
    """Hidden files, and the lock files Office leaves beside an open document ("~$report.docx")."""
    return name.startswith((".", "~$"))


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except OSError:
        return b""


def _is_archive(path: Path) -> bool:
    """Whether path is a zip archive of documents (not a .docx/.xlsx/.pptx, which are zips too)."""
    if not path.is_file() or not _head(path).startswith(ZIP_MAGICS):
        return path.suffix.lower() in ARCHIVE_SUFFIXES and path.is_file()
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return zip_kind(archive.namelist()) == "zip"
    except (zipfile.BadZipFile, OSError):
        return path.suffix.lower() in ARCHIVE_SUFFIXES


OnRefused = Callable[[str, str], None]  # (where, reason) for what a walk does not take, said once each
LOOP = "symlink not followed: it leads to a folder already read (a loop?)"


def _identity(path: Path) -> tuple[int, int] | None:
    """The folder's device and inode, through symlinks (None when it cannot be reached)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _walk(folder: Path, on_refused: OnRefused) -> list[Path]:
    """Non-hidden files under folder, in sorted path order; symlinked folders followed once each, a link
    back to a folder already read (a loop) refused with a line.

    Files of unsupported types are yielded too: read_document refuses them with a reason, so an
    ingest reports every file it did not take instead of passing over it in silence.
    """
    found: list[Path] = []
    seen = {_identity(folder)}
    for root, dirs, files in os.walk(folder, followlinks=True):
        kept = []
        for name in sorted(dirs, key=lambda d: (os.path.islink(os.path.join(root, d)), d)):
            if _is_hidden(name):
                continue
            path = Path(root) / name
            identity = _identity(path)
            if identity is None or identity in seen:
                if path.is_symlink():
                    on_refused(str(path), LOOP)
                continue
            seen.add(identity)
            kept.append(name)
        dirs[:] = kept
        for name in files:
            if not _is_hidden(name):
                found.append(Path(root) / name)
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def _expanded(path: Path, limits: ReadLimits, on_refused: OnRefused) -> list[Path]:
    """A zip archive's files as paths under it (the unsupported ones too, so reading them says why; a name
    that would leave the archive refused with a line); the archive itself when it is refused; else path."""
    if not _is_archive(path):
        return [path]
    try:
        listing = list_archive(path, limits, is_wanted)
    except ReadFailed:
        return [path]  # read_document(path) says why
    for name in listing.unsafe:
        on_refused(f"{path}: {name}", LEAVES_THE_ARCHIVE)
    members = sorted([*listing.wanted, *listing.others], key=lambda name: PurePosixPath(name).parts)
    return [path / member for member in members]


def _ignore(where: str, reason: str) -> None:
    """on_refused for callers that do not report."""


def iter_document_paths(
    paths: Sequence[Path], *, limits: ReadLimits = DEFAULT_LIMITS, on_refused: OnRefused = _ignore
) -> Iterator[Path]:
    """Files given and files found in folders (recursively), each once, in argument then sorted order.

    Hidden files and folders are skipped inside walks. Every other file is yielded, whatever its type
    (read_document refuses an unsupported one with its reason). A zip archive stands for its documents
    (its members, as paths under it), or for itself when it is refused (too big, a zip bomb, corrupt), so
    the caller reads it and reports why. Paths given explicitly are always yielded, even missing ones, so
    the caller can report each. What is never yielded (an archive member named outside the archive, a
    symlink loop) is passed to on_refused with its reason.
    """
    seen: set[Path] = set()
    for given in paths:
        candidates = _walk(given, on_refused) if given.is_dir() else [given]
        for candidate in candidates:
            for path in _expanded(candidate, limits, on_refused):
                key = path.resolve()
                if key not in seen:
                    seen.add(key)
                    yield path

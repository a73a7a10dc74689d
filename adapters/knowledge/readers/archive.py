"""Zip archives (a Confluence or Notion export): their members as documents, with zip-bomb limits.

Members are read in memory, never extracted, and only under safe names (no absolute paths, no ``..``),
so an archive cannot reach outside itself; a member with an unsafe name is listed as refused, by name. Limits (base.ReadLimits) are checked on the archive's
directory before anything is unpacked, and again while a member is read, because a directory can lie
about sizes: a member is read at most to its declared size plus one byte.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from adapters.knowledge.readers.base import RATIO_MIN_BYTES, ReadFailed, ReadLimits, described, megabytes

_SKIPPED_FOLDERS = frozenset({"__MACOSX"})


LEAVES_THE_ARCHIVE = "refused: its name would leave the archive's folder"


def leaves_the_archive(name: str) -> bool:
    """Whether a member's name points outside the archive: absolute, a drive, a backslash, or ``..``."""
    parts = PurePosixPath(name).parts
    return name.startswith("/") or "\\" in name or ".." in parts or bool(parts and ":" in parts[0])


def safe_name(name: str) -> str | None:
    """The member's path as a relative POSIX path, or None when it is a folder, hidden, or unsafe."""
    if name.endswith("/") or "\\" in name or name.startswith("/"):
        return None
    parts = PurePosixPath(name).parts
    if not parts or any(part in ("..", ".") or part.startswith(".") for part in parts):
        return None
    if parts[0] in _SKIPPED_FOLDERS or ":" in parts[0]:
        return None
    return "/".join(parts)


def check_zip(archive: zipfile.ZipFile, limits: ReadLimits, *, what: str = "archive") -> None:
    """Refuse a zip whose directory promises too much: members, total unpacked size, packing ratio."""
    members = archive.infolist()
    if len(members) > limits.max_members:
        raise ReadFailed(f"refused: the {what} holds {len(members):,} files (at most {limits.max_members:,})")
    total = sum(member.file_size for member in members)
    if total > limits.max_archive_bytes:
        raise ReadFailed(
            f"refused: the {what} unpacks to {megabytes(total)} (at most {megabytes(limits.max_archive_bytes)}; "
            "a zip bomb?)"
        )
    for member in members:
        if member.file_size > RATIO_MIN_BYTES and member.file_size > limits.max_ratio * max(
            1, member.compress_size
        ):
            ratio = member.file_size / max(1, member.compress_size)
            raise ReadFailed(
                f"refused: {member.filename} in the {what} unpacks {ratio:,.0f} times its packed size "
                f"(at most {limits.max_ratio}; a zip bomb?)"
            )


def check_zip_bytes(data: bytes, limits: ReadLimits, *, what: str) -> None:
    """check_zip on a zip held in memory (a .docx, .xlsx or .pptx before its library opens it)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            check_zip(archive, limits, what=what)
    except zipfile.BadZipFile as exc:
        raise ReadFailed(f"corrupt file (a damaged ZIP container: {described(exc)})") from exc


def _open(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise ReadFailed(f"corrupt ZIP archive ({described(exc)})") from exc
    except OSError as exc:
        raise ReadFailed(f"cannot read the archive ({exc.strerror or exc})") from exc


@dataclass(frozen=True, slots=True)
class ArchiveListing:
    """An archive's files: those read as documents, the others (their reading says why not), and the
    names refused because they would leave the archive; folders and hidden files are not listed."""

    wanted: list[str]
    others: list[str]
    unsafe: list[str]


def _in_order(names: set[str]) -> list[str]:
    return sorted(names, key=lambda name: PurePosixPath(name).parts)


def list_archive(path: Path, limits: ReadLimits, wanted: Callable[[str], bool]) -> ArchiveListing:
    """The archive's members by what becomes of them, each list in path order.

    Raises ReadFailed when the archive as a whole is refused (corrupt, too big, a zip bomb) or holds no
    member worth reading.
    """
    taken: set[str] = set()
    others: set[str] = set()
    unsafe: set[str] = set()
    with _open(path) as archive:
        check_zip(archive, limits)
        for info in archive.infolist():
            if info.is_dir():
                continue
            if leaves_the_archive(info.filename):
                unsafe.add(info.filename)
            elif (name := safe_name(info.filename)) is not None:
                (taken if wanted(name) else others).add(name)
    if not taken:
        raise ReadFailed("the archive holds no supported documents")
    return ArchiveListing(wanted=_in_order(taken), others=_in_order(others), unsafe=sorted(unsafe))


def archive_members(path: Path, limits: ReadLimits, wanted: Callable[[str], bool]) -> list[str]:
    """The names of the archive's members to read as documents (safe, wanted), in sorted order; raises
    ReadFailed as list_archive does."""
    return list_archive(path, limits, wanted).wanted


def read_member(path: Path, member: str, limits: ReadLimits) -> bytes:
    """The bytes of one member, within the limits (an encrypted member is refused with its reason)."""
    with _open(path) as archive:
        try:
            info = archive.getinfo(member)
        except KeyError as exc:
            raise ReadFailed("file not found in the archive") from exc
        if info.flag_bits & 0x1:
            raise ReadFailed("password-protected (an encrypted member of the archive)")
        if info.file_size > limits.max_file_bytes:
            raise ReadFailed(
                f"too large ({megabytes(info.file_size)} unpacked; the limit is "
                f"{megabytes(limits.max_file_bytes)}, KB_MAX_FILE_MB)"
            )
        if info.file_size > RATIO_MIN_BYTES and info.file_size > limits.max_ratio * max(
            1, info.compress_size
        ):
            raise ReadFailed("refused: it unpacks far more than its packed size (a zip bomb?)")
        try:
            with archive.open(info) as handle:
                data = handle.read(info.file_size + 1)
        except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError) as exc:
            raise ReadFailed(f"corrupt member of the archive ({described(exc)})") from exc
        if len(data) > info.file_size:
            raise ReadFailed("refused: it unpacks to more than the archive says (a zip bomb?)")
        return data

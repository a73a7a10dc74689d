"""Which format a file is, from its first bytes (and a zip's member names), not from its name.

A ``.docx``, ``.xlsx`` or ``.pptx`` is a zip whose members say what it is (``word/document.xml``, ...);
a password-protected one is instead an OLE compound file holding an ``EncryptedPackage`` stream, as
are the old binary ``.doc/.xls/.ppt``. Looking for that stream's name (UTF-16 in the OLE directory) is
enough to tell the two apart and needs no OLE library.
"""

from __future__ import annotations

import io
import zipfile
from typing import Literal

from adapters.knowledge.readers.base import ReadFailed, described

Kind = Literal["pdf", "docx", "pptx", "xlsx", "zip", "text"]

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with members / an empty zip
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
_OOXML_PARTS: tuple[tuple[str, Kind], ...] = (
    ("word/document.xml", "docx"),
    ("ppt/presentation.xml", "pptx"),
    ("xl/workbook.xml", "xlsx"),
)
_UNSUPPORTED_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"GIF8", "a GIF image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"{\\rtf", "an RTF document; save it as .docx"),
    (b"\x7fELF", "an executable"),
    (b"\x1f\x8b", "a gzip archive; only .zip archives are read"),
    (b"Rar!", "a RAR archive; only .zip archives are read"),
    (b"7z\xbc\xaf", "a 7-Zip archive; only .zip archives are read"),
)


def is_zip(head: bytes) -> bool:
    return head.startswith(ZIP_MAGICS)


def zip_kind(names: list[str]) -> Kind:
    """docx / pptx / xlsx when the zip's members make it an Office Open XML file, else zip."""
    present = set(names)
    for part, kind in _OOXML_PARTS:
        if part in present:
            return kind
    return "zip"


def sniff(data: bytes) -> Kind:
    """The format of data; raises ReadFailed naming a format that is known but not read."""
    if data[:1024].lstrip(b"\x00\t\n\r\f ").startswith(b"%PDF-"):
        return "pdf"
    if is_zip(data):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = archive.namelist()
                if "mimetype" in names and archive.read("mimetype")[:60].startswith(
                    b"application/vnd.oasis.opendocument"
                ):
                    raise ReadFailed("OpenDocument files are not supported; save it as .docx, .xlsx or .pptx")
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ReadFailed(f"corrupt file (a damaged ZIP container: {described(exc)})") from exc
        return zip_kind(names)
    if data.startswith(OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            raise ReadFailed(
                "password-protected Office document (encrypted; remove the password and save again)"
            )
        raise ReadFailed(
            "old binary Office format (.doc, .xls, .ppt) is not supported; save it as .docx, .xlsx or .pptx"
        )
    for magic, what in _UNSUPPORTED_MAGIC:
        if data.startswith(magic):
            return _unsupported(what)
    return "text"


def _unsupported(what: str) -> Kind:
    raise ReadFailed(f"binary file ({what})")

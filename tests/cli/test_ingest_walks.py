"""`kb ingest` as a subprocess: every archive member not taken gets a line, symlinked folders are read once
and a symlink loop is refused with a line."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from tests.cli.cli_support import clean_env, kb


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_every_archive_member_not_taken_has_a_line_and_escaping_names_are_refused_by_name(
    tmp_path: Path,
) -> None:
    """A nested zip, a binary, `../x.md` and `/x.md` in an archive: one `warning:` line each, naming the
    member; only the document inside is ingested and nothing is written beside the archive."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "export.zip").write_bytes(
        zip_of(
            {
                "ok.md": b"# Parking\n\nCars park in lot B.\n",
                "inner.zip": zip_of({"in.md": b"# In\n\ninside\n"}),
                "tool.bin": bytes(range(256)) * 4,
                "../x.md": b"# Escape\n\nout\n",
                "/y.md": b"# Absolute\n\nout\n",
            }
        )
    )
    result = kb(clean_env(tmp_path / "home"), "ingest", str(folder), "--dataset", "t")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: skipped")]
    archive = folder / "export.zip"
    assert (
        f"warning: skipped {archive}: ../x.md: refused: its name would leave the archive's folder" in warnings
    )
    assert (
        f"warning: skipped {archive}: /y.md: refused: its name would leave the archive's folder" in warnings
    )
    assert any(line.startswith(f"warning: skipped {archive}/inner.zip: ") for line in warnings)
    assert any(line.startswith(f"warning: skipped {archive}/tool.bin: ") for line in warnings)
    assert len(warnings) == 4
    assert "documents: 1 new" in result.stdout
    assert not (tmp_path / "x.md").exists() and sorted(p.name for p in folder.iterdir()) == ["export.zip"]


def test_symlinked_folders_are_followed_once_and_a_loop_is_refused(tmp_path: Path) -> None:
    """A folder linked into the tree is read (once, though linked twice); a link back to an ancestor is
    a `warning:` line naming it, and the walk ends."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "vpn.md").write_text("# VPN\n\nAsk IT for a VPN token.\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lunch.md").write_text("# Lunch\n\nLunch is served at noon.\n", encoding="utf-8")
    (docs / "it").symlink_to(shared, target_is_directory=True)
    (docs / "it-again").symlink_to(shared, target_is_directory=True)
    (docs / "loop").symlink_to(docs, target_is_directory=True)
    env = clean_env(tmp_path / "home")
    result = kb(env, "ingest", str(docs), "--dataset", "t")
    assert result.returncode == 0, result.stderr
    assert "documents: 2 new" in result.stdout
    assert f"warning: skipped {docs / 'loop'}: symlink not followed" in result.stderr
    assert f"warning: skipped {docs / 'it-again'}: symlink not followed" in result.stderr
    listing = kb(env, "docs", "list", "--dataset", "t")
    assert "2 documents" in listing.stdout and "shared/vpn.md" in listing.stdout

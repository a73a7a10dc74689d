"""Check that a `kb eval --html` report renders in headless Chromium: screenshot it beside a blank page.

Run: python tests/benchmarks/check_eval_html.py REPORT.html [--out shot.png] [--chromium /usr/bin/chromium]

The report is rendered offline (network features off) to a PNG; the check passes when Chromium exits 0,
the file is a PNG, and it holds far more drawn content than a blank page rendered the same way (the
compressed size ratio is printed). Open the PNG to look at it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,1800",
]


def screenshot(chromium: str, page: Path, out: Path) -> None:
    """Render page to out (PNG) in a fresh profile."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={out}", page.resolve().as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--out", type=Path, default=Path("eval-report.png"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    if not Path(args.chromium).exists():
        print(f"skipped: no Chromium at {args.chromium} (apt-get install chromium)")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        blank_page = Path(scratch) / "blank.html"
        blank_page.write_text("<!doctype html><html><body></body></html>", encoding="utf-8")
        blank_shot = Path(scratch) / "blank.png"
        screenshot(args.chromium, blank_page, blank_shot)
        screenshot(args.chromium, args.report, args.out)
        blank_size = blank_shot.stat().st_size
    data = args.out.read_bytes()
    ratio = len(data) / max(1, blank_size)
    ok = data.startswith(b"\x89PNG\r\n\x1a\n") and ratio > 5
    print(
        f"{args.out}: {len(data)} bytes, {ratio:.1f}x a blank page's screenshot -> {'ok' if ok else 'FAILED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""`kb doctor`: one line per check with ✓ / ✗ and what to do; exit 0 only when nothing failed (bot.doctor)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.doctor.local import check_knowledge, check_settings, check_store
from bot.doctor.remote import check_classifier, check_model, check_slack
from bot.doctor.report import Check, exit_code, summary_line
from bot.settings import Settings


def register(commands: Any) -> None:
    """Add `kb doctor`."""
    parser = commands.add_parser(
        "doctor",
        help="check settings, the conversation store, Chroma and datasets, the model endpoint, Slack",
        description="Check that this installation works: settings parse, the conversation store opens and "
        "is migrated, Chroma answers and every dataset agrees with its embedder and keyword index, the "
        "model endpoint lists and runs the configured models (and which JSON mode it accepts), Slack's "
        "auth.test works with the manifest's scopes, the classifier service is healthy. Exit 0 only when "
        "every check passes (a part that is not configured is skipped).",
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.set_defaults(handler=run)


async def examine(_: Settings | None = None) -> list[Check]:
    """Every check, in order; the settings are read again so their warnings are seen."""
    settings_check, settings = check_settings()
    checks = [settings_check, await check_store(settings)]
    checks += await check_knowledge(settings)
    checks += await check_model(settings)
    checks += await check_slack(settings)
    checks += await check_classifier(settings)
    return checks


async def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print the checks (or their JSON) and return 0 only when none failed."""
    checks = await examine(settings)
    if args.json:
        payload = {"ok": exit_code(checks) == 0, "checks": [check.to_json() for check in checks]}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        for check in checks:
            print(check.line(), flush=True)
        print(summary_line(checks))
    return exit_code(checks)

"""`python -m bot` runs the `kb` command line."""

import sys

from bot.entry import run

sys.exit(run())

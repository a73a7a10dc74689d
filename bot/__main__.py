"""`python -m bot` runs the `kb` command line."""

import sys

from bot.cli import main

sys.exit(main())

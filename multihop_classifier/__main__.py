"""``python -m multihop_classifier``: the classifier's command line."""

import sys

from multihop_classifier.cli import main

sys.exit(main())

"""Evaluation sets written by the team, with tests that check them against the corpus they are asked over."""

"""Slack surfaces beside the answer: Home tab, assistant pane, trace modal, thread actions, /kb command."""

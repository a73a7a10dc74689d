"""Slack events to questions: triggers, intake, access, channel scopes, user names, threads, plain text."""

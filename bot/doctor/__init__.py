"""`kb doctor`: is this installation healthy, and if not, what to do (settings, store, Chroma, model, Slack)."""

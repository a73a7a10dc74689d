"""SQL plumbing behind the conversation store: dialects, database connections, errors and migrations."""

"""One writer per dataset across processes: who holds a dataset, a lock file under KB_HOME, a PostgreSQL advisory lock."""

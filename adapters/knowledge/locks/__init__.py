"""One writer per dataset across processes: the holder's record, a lock file under KB_HOME, an advisory lock."""

"""Question analysis: a compound question split into parts, compared entities, and each part's weighted terms."""

"""End-to-end conversation scenarios through the composition root with real Chroma, SQLite and HTTP."""

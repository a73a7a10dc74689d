"""Keyword search beside Chroma: jieba tokens, immutable BM25 segments, one shared manifest per dataset."""

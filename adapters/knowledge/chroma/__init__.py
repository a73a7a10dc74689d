"""The knowledge base on Chroma: the store, a dataset's collections, its catalog and keyword side, workers."""

"""The knowledge base on Chroma: store, datasets, catalog, BM25 keyword indexes, workers, document readers.

``factory`` opens it (embedded PersistentClient or a Chroma server) with the embedder each dataset was
built with. Imports core, adapters.embedders and vendor libraries (chromadb, bm25s, jieba, numpy).
"""

"""The knowledge base on Chroma: store, datasets, catalog, BM25 keyword indexes, workers, document readers.

``factory`` opens it (embedded PersistentClient or a Chroma server) with the embedder each dataset was
built with. Documents are read by the seam ``document_readers`` with one reader per format in ``readers``.
Imports core, adapters.embedders and vendor libraries (chromadb, bm25s, jieba, numpy; pypdf, python-docx,
python-pptx, openpyxl in ``readers``).
"""

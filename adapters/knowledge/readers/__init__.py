"""Document readers, one module per format, behind the seam adapters.knowledge.document_readers.

Each reader turns a file's bytes into core.models.DocumentPart values (a page, a slide, a sheet row, or
the whole text) plus the document's own title, with a kept library per format: pypdf (PDF), python-docx
(Word), python-pptx (PowerPoint), openpyxl (Excel), the standard library's csv, zipfile and html.parser.
Imports core's shared vocabulary and those libraries; no other adapter.
"""

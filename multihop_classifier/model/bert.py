"""A local BERT/RoBERTa backbone as the encoder: the [CLS] vector of a model directory on disk.

Used only when the user points at a mounted model directory and torch + transformers are installed;
weights are never downloaded (``local_files_only`` and the hub's offline switches are always set).
The backbone is frozen: the classification head is trained on its [CLS] vectors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from multihop_classifier import MAX_TOKENS
from multihop_classifier.model.encoding import Encoded, EncoderUnavailable


def bert_available() -> bool:
    """True when torch and transformers can be imported here."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


class BertEncoder:
    """[CLS] vectors of a local Hugging Face BERT/RoBERTa directory (config, weights, tokenizer files)."""

    def __init__(self, directory: Path, *, max_tokens: int = MAX_TOKENS, threads: int = 1) -> None:
        self.directory = Path(directory)
        self.max_tokens = max_tokens
        self.name = f"bert:{self.directory.name}"
        self._threads = threads
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self.dimension = 0
        self._load()

    def spec(self) -> dict[str, Any]:
        """``{"kind": "bert", "path": ...}``: the directory is mounted beside the model, never copied into it."""
        return {"kind": "bert", "name": self.name, "path": str(self.directory), "dimension": self.dimension}

    def _load(self) -> None:
        if not (self.directory / "config.json").is_file():
            raise EncoderUnavailable(f"no BERT model directory at {self.directory} (config.json missing)")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise EncoderUnavailable(
                "the BERT encoder needs torch and transformers (pip install torch==2.13.0 transformers)"
            ) from exc
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(self.directory), local_files_only=True)
            model = AutoModel.from_pretrained(str(self.directory), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise EncoderUnavailable(
                f"the BERT model at {self.directory} could not be loaded: {exc}"
            ) from exc
        torch.set_num_threads(self._threads)
        model.eval()
        self._model, self._tokenizer = model, tokenizer
        self.dimension = int(model.config.hidden_size)

    def encode(self, texts: Sequence[str]) -> Encoded:
        """[CLS] vectors of the texts, each cut to max_tokens word pieces (special tokens included)."""
        import torch

        texts = list(texts)
        if not texts:
            return Encoded(np.zeros((0, self.dimension), dtype=np.float32), [], [])
        with self._lock:
            tokens = [len(ids) for ids in self._tokenizer(texts, add_special_tokens=True)["input_ids"]]
            batch = self._tokenizer(
                texts, truncation=True, max_length=self.max_tokens, padding=True, return_tensors="pt"
            )
            with torch.inference_mode():
                output = self._model(**batch)
            vectors = output.last_hidden_state[:, 0, :].float().numpy().astype(np.float32)
        return Encoded(vectors, tokens, [count > self.max_tokens for count in tokens])

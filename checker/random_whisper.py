"""A randomly initialised whisper model and processor built offline, for tests and the demo's transcripts.

No weights can be downloaded where the project is tested, yet the speech-to-text path (feature extractor,
encoder, decoder, tokenizer) must really run. A byte-level BPE vocabulary with no merges (one token per
byte) and whisper's special tokens give a tokenizer that ``WhisperTokenizer`` loads; a four-layer ``WhisperConfig``
of width 64 makes a model of about half a million parameters that transcribes random text in a fraction of a second.
"""

from __future__ import annotations

import string
from pathlib import Path

from .torch_compat import ensure_torchvision_importable

SPECIALS = ("<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|zh|>", "<|transcribe|>", "<|translate|>",
            "<|nocaptions|>", "<|notimestamps|>")  # fmt: skip


def _byte_vocab() -> dict[str, int]:
    """GPT-2's byte-to-unicode table: every byte is one token, so any text encodes without merges."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    codes = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            codes.append(256 + extra)
            extra += 1
    return {chr(c): i for i, c in enumerate(codes)}


def build_random_whisper(folder: Path, seed: int = 0) -> Path:
    """Write a random whisper model, its tokenizer and feature extractor to ``folder``; return it."""
    ensure_torchvision_importable()
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizer,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab = _byte_vocab()
    for token in SPECIALS:
        vocab[token] = len(vocab)
    tokenizer = WhisperTokenizer(
        vocab=vocab, merges=[], unk_token="<|endoftext|>", bos_token="<|endoftext|>", eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )  # fmt: skip
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIALS[1:])})
    extractor = WhisperFeatureExtractor(feature_size=80, sampling_rate=16_000)
    WhisperProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(folder)
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIALS}
    writable = [i for ch in string.ascii_lowercase + " " for i in tokenizer.encode(ch, add_special_tokens=False)]
    config = WhisperConfig(
        vocab_size=len(vocab),
        num_mel_bins=80,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_source_positions=1500,
        max_target_positions=24,
        pad_token_id=ids["<|endoftext|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|endoftext|>"],
        decoder_start_token_id=ids["<|startoftranscript|>"],
        begin_suppress_tokens=None,
        suppress_tokens=None,
    )
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config)
    model.generation_config = GenerationConfig(  # its own file, not one derived from the model's config
        decoder_start_token_id=ids["<|startoftranscript|>"],
        eos_token_id=ids["<|endoftext|>"],
        pad_token_id=ids["<|endoftext|>"],
        no_timestamps_token_id=ids["<|notimestamps|>"],
        lang_to_id={"<|en|>": ids["<|en|>"], "<|zh|>": ids["<|zh|>"]},
        task_to_id={"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]},
        is_multilingual=True,
        max_length=24,
        # random weights favour special tokens and control bytes: only lower-case letters and the space stay
        # open, so the random model writes a readable (meaningless) transcript instead of an empty one
        suppress_tokens=sorted(set(range(len(vocab))) - set(writable) - {ids["<|endoftext|>"]}),
        begin_suppress_tokens=[ids["<|endoftext|>"]],
    )
    model.save_pretrained(folder)
    return folder

"""Randomly initialised Qwen2.5-Omni models built offline, for tests, the cost benchmark and the GPU check.

No weights can be downloaded where the project is tested, yet the multimodal code paths (processor, image
and audio encoders, chat template) must really run. A character-level tokenizer and configs from
``transformers`` give a complete model folder that transformers and vLLM both load
(see shared/notes/tiny-omni-model.md). ``size="7b"`` uses the Qwen2.5-Omni-7B thinker dimensions.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any, Literal

SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|AUDIO|>",
    "<|audio_bos|>",
    "<|audio_eos|>",
    "<|vision_bos|>",
    "<|vision_eos|>",
    "<|vision_pad|>",
    "<|IMAGE|>",
    "<|VIDEO|>",
)

# Media are wrapped in their start/end tokens: rope indexing finds each medium by its start token.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] in ('image', 'image_url', 'image_pil') %}<|vision_bos|><|IMAGE|><|vision_eos|>"
    "{% elif part['type'] in ('audio', 'audio_url', 'input_audio') %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

Size = Literal["tiny", "7b"]


def _tokenizer(vocab_size: int):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = list(dict.fromkeys(string.printable + "’‘“”—–…éèàçüöäñ"))
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for ch in chars:
        vocab.setdefault(ch, len(vocab))
    vocab["[UNK]"] = len(vocab)
    assert len(vocab) <= vocab_size
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.add_special_tokens(list(SPECIAL_TOKENS))
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
        extra_special_tokens={
            "image_token": "<|IMAGE|>",
            "audio_token": "<|AUDIO|>",
            "video_token": "<|VIDEO|>",
            "vision_bos_token": "<|vision_bos|>",
            "vision_eos_token": "<|vision_eos|>",
            "audio_bos_token": "<|audio_bos|>",
            "audio_eos_token": "<|audio_eos|>",
        },
    )


def _dimensions(size: Size) -> dict[str, Any]:
    if size == "tiny":
        return {
            "text": dict(
                vocab_size=256,
                hidden_size=128,
                intermediate_size=256,
                num_hidden_layers=2,
                num_attention_heads=2,
                num_key_value_heads=1,
                max_position_embeddings=4096,
                rope_scaling={"type": "default", "mrope_section": [8, 12, 12], "rope_type": "default"},
            ),
            "vision": dict(
                depth=2,
                hidden_size=128,
                intermediate_size=256,
                num_heads=2,
                window_size=112,
                fullatt_block_indexes=[1],
                out_hidden_size=128,
            ),
            "audio": dict(
                encoder_layers=2,
                d_model=128,
                encoder_attention_heads=2,
                encoder_ffn_dim=256,
                num_mel_bins=128,
                n_window=100,
                output_dim=128,
            ),
            "pixels": (56 * 56, 112 * 112),
        }
    # Qwen2.5-Omni-7B thinker (config.json of the released model)
    return {
        "text": dict(
            vocab_size=152064,
            hidden_size=3584,
            intermediate_size=18944,
            num_hidden_layers=28,
            num_attention_heads=28,
            num_key_value_heads=4,
            max_position_embeddings=32768,
            rope_theta=1000000.0,
            rope_scaling={"type": "default", "mrope_section": [16, 24, 24], "rope_type": "default"},
        ),
        "vision": dict(
            depth=32,
            hidden_size=1280,
            intermediate_size=3420,
            num_heads=16,
            window_size=112,
            fullatt_block_indexes=[7, 15, 23, 31],
            out_hidden_size=3584,
        ),
        "audio": dict(
            encoder_layers=32,
            d_model=1280,
            encoder_attention_heads=20,
            encoder_ffn_dim=5120,
            num_mel_bins=128,
            n_window=100,
            output_dim=3584,
        ),
        "pixels": (56 * 56, 448 * 448),
    }


def thinker_config(size: Size, tokenizer):  # type: ignore[no-untyped-def]
    from transformers import Qwen2_5OmniThinkerConfig

    dims = _dimensions(size)
    ids = tokenizer.convert_tokens_to_ids
    # untied output head, as in the released models: vLLM loads ``lm_head`` from the checkpoint
    text = {**dims["text"], "tie_word_embeddings": False}
    return Qwen2_5OmniThinkerConfig(
        text_config=text,
        vision_config=dims["vision"],
        audio_config=dims["audio"],
        audio_token_index=ids("<|AUDIO|>"),
        image_token_index=ids("<|IMAGE|>"),
        video_token_index=ids("<|VIDEO|>"),
        audio_start_token_id=ids("<|audio_bos|>"),
        audio_end_token_id=ids("<|audio_eos|>"),
        vision_start_token_id=ids("<|vision_bos|>"),
        vision_end_token_id=ids("<|vision_eos|>"),
        pad_token_id=ids("<|endoftext|>"),
        eos_token_id=ids("<|im_end|>"),
    )


def build_processor(size: Size = "tiny"):  # type: ignore[no-untyped-def]
    from transformers import (
        Qwen2_5OmniProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
        WhisperFeatureExtractor,
    )

    min_pixels, max_pixels = _dimensions(size)["pixels"]
    vocab_size = _dimensions(size)["text"]["vocab_size"]
    sizes = {"shortest_edge": min_pixels, "longest_edge": max_pixels}
    return Qwen2_5OmniProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=min_pixels, max_pixels=max_pixels, size=sizes),
        video_processor=Qwen2VLVideoProcessor(min_pixels=min_pixels, max_pixels=max_pixels, size=sizes),
        feature_extractor=WhisperFeatureExtractor(feature_size=128, sampling_rate=16000, return_attention_mask=True),
        tokenizer=_tokenizer(vocab_size),
        chat_template=CHAT_TEMPLATE,
    )


def build_random_omni(
    folder: Path, *, size: Size = "tiny", seed: int = 0, vllm_layout: bool = True, dtype: str = "float32"
) -> Path:
    """Write a random Qwen2.5-Omni model with its processor to ``folder`` and return it.

    With ``vllm_layout`` the saved class is ``Qwen2_5OmniForConditionalGeneration`` (audio output off,
    empty speaker dictionary), which vLLM's registry knows and transformers loads too (``.thinker``).
    """
    import torch
    from transformers import (
        Qwen2_5OmniConfig,
        Qwen2_5OmniForConditionalGeneration,
        Qwen2_5OmniThinkerForConditionalGeneration,
    )

    folder.mkdir(parents=True, exist_ok=True)
    processor = build_processor(size)
    thinker_cfg = thinker_config(size, processor.tokenizer)
    torch.manual_seed(seed)
    torch_dtype = getattr(torch, dtype)
    if vllm_layout:
        config = Qwen2_5OmniConfig(thinker_config=thinker_cfg.to_dict(), enable_audio_output=False)
        model = Qwen2_5OmniForConditionalGeneration(config)
        torch.save({}, folder / "spk_dict.pt")
    else:
        model = Qwen2_5OmniThinkerForConditionalGeneration(thinker_cfg)
    model.to(torch_dtype).save_pretrained(folder)
    processor.save_pretrained(folder)
    (folder / "random_omni.json").write_text(json.dumps({"size": size, "seed": seed}), encoding="utf-8")
    return folder

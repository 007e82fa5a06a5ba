"""Hugging Face generate() on tiny GPT-2, Llama and T5 models built from configs (no download):
top-k / top-p sampling and beam search give the same tokens at 1 and 2 threads inside repmode, in
strict mode (topk, sort, cumsum, softmax, multinomial, and for beam search the bitwise Scalar
overloads on bool masks: all registered; Llama adds rotary embeddings, RMS norm, SiLU and grouped
key/value heads, T5 an encoder-decoder with relative position buckets)."""
from __future__ import annotations

import pytest
import torch
from support.helpers import num_threads

import repmode

transformers = pytest.importorskip("transformers")

VOCAB = 97


def _config(family):
    if family == "gpt2":
        return transformers.GPT2LMHeadModel, transformers.GPT2Config(
            vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4, bos_token_id=1, eos_token_id=2)
    if family == "llama":
        return transformers.LlamaForCausalLM, transformers.LlamaConfig(
            vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    return transformers.T5ForConditionalGeneration, transformers.T5Config(
        vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=2)


def _model(family):
    torch.manual_seed(0)
    cls, config = _config(family)
    with repmode.enabled(strict=True):  # the weights from repmode's random stream
        model = cls(config).eval()
    prompt = torch.randint(3, VOCAB, (2, 5), generator=torch.Generator().manual_seed(7))
    return model, prompt


def _generate(model, prompt, threads, strict, **kwargs):
    torch.manual_seed(1)
    with num_threads(threads), repmode.enabled(strict=strict) as mode:
        tokens = model.generate(prompt, max_new_tokens=12, pad_token_id=0, attention_mask=torch.ones_like(prompt),
                                **kwargs)
    return tokens, mode


FAMILIES = ["gpt2", "llama", "t5"]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kwargs", [dict(do_sample=True, top_k=10, top_p=0.9),
                                    dict(do_sample=True, top_k=0, top_p=0.8, temperature=0.7),
                                    dict(do_sample=True, top_k=5)], ids=["top_k+top_p", "top_p", "top_k"])
def test_sampling_gives_the_same_tokens_at_1_and_2_threads_in_strict_mode(family, kwargs):
    model, prompt = _model(family)
    one, _ = _generate(model, prompt, 1, True, **kwargs)
    two, _ = _generate(model, prompt, 2, True, **kwargs)
    # decoder-only models return the prompt and 12 new tokens; T5 its decoder start token and 12
    assert one.shape == ((2, 17) if family != "t5" else (2, 13))
    assert torch.equal(one, two)


@pytest.mark.parametrize("family", FAMILIES)
def test_beam_search_gives_the_same_tokens_at_1_and_2_threads(family):
    model, prompt = _model(family)
    one, _ = _generate(model, prompt, 1, True, num_beams=3, do_sample=False)
    two, _ = _generate(model, prompt, 2, True, num_beams=3, do_sample=False)
    assert one.shape[0] == 2
    assert torch.equal(one, two)

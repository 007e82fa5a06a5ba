"""Hugging Face generate() on a tiny GPT-2 built from a config (no download): top-k / top-p sampling
and beam search give the same tokens at 1 and 2 threads inside repmode, in strict mode (topk, sort,
cumsum, softmax, multinomial, and for beam search the bitwise Scalar overloads on bool masks: all
registered)."""
from __future__ import annotations

import pytest
import torch
from support.helpers import num_threads

import repmode

transformers = pytest.importorskip("transformers")


def _model():
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=97, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                                     bos_token_id=1, eos_token_id=2)
    with repmode.enabled(strict=True):  # the weights from repmode's random stream
        model = transformers.GPT2LMHeadModel(config).eval()
    prompt = torch.randint(3, 97, (2, 5), generator=torch.Generator().manual_seed(7))
    return model, prompt


def _generate(model, prompt, threads, strict, **kwargs):
    torch.manual_seed(1)
    with num_threads(threads), repmode.enabled(strict=strict) as mode:
        tokens = model.generate(prompt, max_new_tokens=12, pad_token_id=0, attention_mask=torch.ones_like(prompt),
                                **kwargs)
    return tokens, mode


@pytest.mark.parametrize("kwargs", [dict(do_sample=True, top_k=10, top_p=0.9),
                                    dict(do_sample=True, top_k=0, top_p=0.8, temperature=0.7),
                                    dict(do_sample=True, top_k=5)], ids=["top_k+top_p", "top_p", "top_k"])
def test_sampling_gives_the_same_tokens_at_1_and_2_threads_in_strict_mode(kwargs):
    model, prompt = _model()
    one, _ = _generate(model, prompt, 1, True, **kwargs)
    two, _ = _generate(model, prompt, 2, True, **kwargs)
    assert one.shape == (2, 17)
    assert torch.equal(one, two)


def test_beam_search_gives_the_same_tokens_at_1_and_2_threads():
    model, prompt = _model()
    one, _ = _generate(model, prompt, 1, True, num_beams=3, do_sample=False)
    two, _ = _generate(model, prompt, 2, True, num_beams=3, do_sample=False)
    assert one.shape[0] == 2
    assert torch.equal(one, two)

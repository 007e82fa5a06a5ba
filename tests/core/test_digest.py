"""repmode.digest: equal values hash equal from any layout, device or NaN payload; dtype and
shape are part of the hash; the byte layout is pinned by recorded constants (stable API)."""
from __future__ import annotations

import pytest
import torch

import repmode


def fixed_model():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    with torch.no_grad():
        model[0].weight.copy_(torch.arange(6.0).reshape(2, 3) / 8)
        model[0].bias.copy_(torch.tensor([0.5, -0.25]))
    return model


def stepped_optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    opt.step()
    return opt


# Recorded once; a change here breaks every digest users have stored, so it needs a very good
# reason (and a note in the changelog), never a silent update.
RECORDED = {
    "f32": (lambda: torch.arange(6, dtype=torch.float32).reshape(2, 3) / 4,
            "c04627cb9ebddc56c3bd6fb63be3a147dc5bba1dad94218bc59662d8b6780afd"),
    "f64": (lambda: torch.tensor([1.0, -0.0, float("inf")], dtype=torch.float64),
            "73c3eb83c40dd9efa5479abbceee9f98ceb4fe8dd5f72e64f91a9a50a46f7ce0"),
    "bf16": (lambda: torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
             "5c9e220e9b6b9620f50a4fdb577389fcd4a0be7963c3581cb1aa62f567a166bf"),
    "i64": (lambda: torch.arange(-2, 3), "db67b382066ffd3caa488f6eabc53956baa9740e9005785550d8cd9f3da939d2"),
    "bool": (lambda: torch.tensor([True, False, True]),
             "d867245a14c519102e043b859ab8235148919c08893720fda0deaf9f2133daa1"),
    "nan": (lambda: torch.tensor([float("nan"), 1.0]),
            "911201db45ca0d03b9e6a28f98605575a1baa5dd234b8478f6d2f4e0b02b42ea"),
    "scalar": (lambda: torch.tensor(3.0), "bfbae19727a6d6fdc8cab6771a67634a7f08f1b8b333f165b7a65cb0c5b3cdf3"),
    "empty": (lambda: torch.zeros(0, 4), "0ecf9e94b0aa7f6269ba8ce932501b2207c05cf5db84d3d8ec2e98c1cbb09ec0"),
    "c64": (lambda: torch.tensor([1 + 2j, -3j], dtype=torch.complex64),
            "17279ca7b4e21fe0dc7404bcdeb61be168d08361a2744cbbeb928eb70f2cefa3"),
    "module": (fixed_model, "5f1aab266a4728c916d2f7bda8805e5709b65b615f53a4dba3813e158a31fafe"),
    # the optimizer's per-parameter state (its param groups list torch's settings, which grow
    # with torch versions)
    "optimizer state": (lambda: stepped_optimizer(fixed_model()).state_dict()["state"],
                        "1fb890a8efe94479562cf1ae2c1e62176d6fa887804408ceec92ac07b1a8bf2b"),
    "nested": (lambda: {"a": [torch.ones(2), (1, 2.5, None, "x")], "b": True},
               "2ecf6111e0d4d8a93b9aaaad14e2a329db3fc5fd926460d7afd80357b0bc5c70"),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_matches_recorded_constants(name):
    make, expected = RECORDED[name]
    assert repmode.digest(make()) == expected


def test_recorded_tensor_layout_is_header_then_little_endian_elements():
    import hashlib
    import struct
    t = torch.tensor([1.0, -2.0])
    header = b"tensor:float32:[2]"
    data = struct.pack("<I", len(header)) + header + struct.pack("<ff", 1.0, -2.0)
    assert repmode.digest(t) == hashlib.sha256(data).hexdigest()


def test_equal_values_in_other_layouts_hash_equal():
    base = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    d = repmode.digest(base)
    assert repmode.digest(base.permute(2, 0, 1).contiguous().permute(1, 2, 0)) == d  # strided view
    assert repmode.digest(base.transpose(0, 2).contiguous().transpose(0, 2)) == d  # transposed strides
    wide = torch.zeros(2, 3, 8)
    wide[:, :, ::2] = base
    assert repmode.digest(wide[:, :, ::2]) == d  # sliced
    img = torch.randn(2, 3, 4, 5)
    assert repmode.digest(img.contiguous(memory_format=torch.channels_last)) == repmode.digest(img)
    assert repmode.digest(torch.tensor([1.0, 2.0]).neg().conj()) == repmode.digest(torch.tensor([-1.0, -2.0]))
    assert repmode.digest(torch.nn.Parameter(base.clone())) == d


@pytest.mark.parametrize("dtype,bits_dtype,payloads", [
    (torch.float32, torch.int32, [0x7FC00000, 0x7FC00001, -0x00400000, 0x7F800001]),  # incl. sign, signalling
    (torch.float64, torch.int64, [0x7FF8000000000000, 0x7FF0000000000001, -0x0008000000000000]),
    (torch.float16, torch.int16, [0x7E00, 0x7C01, -0x0200]),
    (torch.bfloat16, torch.int16, [0x7FC0, 0x7F81, -0x0040]),
])
def test_every_nan_payload_hashes_the_same(dtype, bits_dtype, payloads):
    digests = set()
    for bits in payloads:
        t = torch.tensor([bits, 0], dtype=bits_dtype).view(dtype)
        assert torch.isnan(t[0])
        digests.add(repmode.digest(t))
    assert len(digests) == 1
    assert repmode.digest(torch.tensor([float("nan"), 0.0], dtype=dtype)) in digests


def test_complex_nan_parts_are_canonical():
    a = torch.tensor([complex(float("nan"), 1.0)], dtype=torch.complex64)
    b = torch.view_as_real(a.clone())
    b.view(torch.int32)[0, 0] = 0x7FC00123
    assert repmode.digest(torch.view_as_complex(b)) == repmode.digest(a)


def test_dtype_and_shape_are_part_of_the_digest():
    x = torch.zeros(6)
    assert repmode.digest(x) != repmode.digest(x.double())
    assert repmode.digest(x) != repmode.digest(x.reshape(2, 3))
    assert repmode.digest(torch.zeros(2, dtype=torch.int32)) != repmode.digest(torch.zeros(2))  # same bytes
    assert repmode.digest(torch.tensor(0.0)) != repmode.digest(torch.tensor(-0.0))  # the bits differ
    assert repmode.digest([x]) != repmode.digest((x, x))
    assert repmode.digest({"w": x}) != repmode.digest({"v": x})


def test_module_hashes_parameters_and_buffers_with_names():
    model = fixed_model()
    d = repmode.digest(model)
    assert d == repmode.digest(fixed_model())
    assert d != repmode.digest(model.state_dict()), "a module is tagged apart from its bare state_dict"
    model[1].running_mean += 1  # a buffer
    assert repmode.digest(model) != d


def test_optimizer_state_and_settings():
    model = fixed_model()
    opt = stepped_optimizer(model)
    d = repmode.digest(opt)
    assert d == repmode.digest(stepped_optimizer(fixed_model()))
    opt.state[model[0].weight]["momentum_buffer"] += 1
    assert repmode.digest(opt) != d
    opt2 = stepped_optimizer(fixed_model())
    opt2.param_groups[0]["lr"] = 0.2
    assert repmode.digest(opt2) != d


def test_objects_with_state_dict_and_rejections():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)
    d = repmode.digest(sched)
    opt.step()
    sched.step()
    assert repmode.digest(sched) != d
    with pytest.raises(TypeError, match="cannot hash object"):
        repmode.digest(object())
    with pytest.raises(TypeError, match="dense"):
        repmode.digest(torch.eye(2).to_sparse())
    with pytest.raises(TypeError, match="meta"):
        repmode.digest(torch.empty(2, device="meta"))


def test_digest_inside_the_mode_equals_outside():
    x = torch.randn(5)
    with repmode.enabled():
        inside = repmode.digest(x)
    assert inside == repmode.digest(x)


def test_float8_and_unsigned_dtypes_hash():
    x = torch.tensor([1.0, float("nan")]).to(torch.float8_e4m3fn)
    assert repmode.digest(x) != repmode.digest(x.view(torch.uint8))
    assert len({repmode.digest(torch.tensor([5], dtype=dt)) for dt in (torch.uint8, torch.int8, torch.uint16)}) == 3

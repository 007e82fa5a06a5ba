"""repmode._C_cuda.gemm equals repmode._C.gemm bit for bit: shapes around the kernel's tiles
(128 x 128 x 8 for float32, 64 x 64 x 8 for float64), K = 0, 1 and a partial last k-tile, chunk
(256) and group (16,384) boundaries of the order over k, sums of several groups, split k (few
output tiles: slices of k in separate blocks, combined by a second kernel) and the unsplit
multi-chunk path (132 tiles or more, the kernel's threshold), batch strides 0, transposed and
sliced operands (the scalar-load path) and aligned contiguous ones (the float4 path), strided
outputs, NaN / inf / subnormal inputs."""
from __future__ import annotations

import pytest
import torch
from support import assert_bitwise_equal
from support.cuda_helpers import CPU, GPU, finish, needs_cuda, random_input, stream

pytestmark = needs_cuda

CODE = {torch.float32: 0, torch.float64: 1}
DTYPES = [torch.float32, torch.float64]


def strides3(t: torch.Tensor) -> tuple[int, int, int]:
    return tuple(t.stride()) if t.dim() == 3 else (0, *t.stride())


def run_both(bases, make, out_base, make_out, batch, M, N, K):
    """Calls the CPU and the CUDA gemm on views built by `make` (A, B from the base tensors) and
    `make_out` (C from out_base), on copies of the same data; compares the whole output storage, so
    stray writes show too."""
    results = []
    for dev in ("cpu", "cuda"):
        bs = [b.clone().to(dev) for b in bases]
        A, B = make(*bs)
        ob = out_base.clone().to(dev)
        C = make_out(ob)
        sa, sb, sc = strides3(A), strides3(B), strides3(C)
        args = (CODE[A.dtype], batch, M, N, K, A.data_ptr(), *sa, B.data_ptr(), *sb, C.data_ptr(), *sc)
        if dev == "cpu":
            CPU.gemm(*args, 2)
        else:
            GPU.gemm(*args, stream())
            finish()
        results.append(ob.cpu())
    assert_bitwise_equal(results[1], results[0], "gemm")


def contiguous_case(batch, M, N, K, dtype, seed=0, offset=0):
    """Row-major A, B, C; `offset` elements into their storage (1 breaks the float4 alignment)."""
    a = random_input((offset + batch * M * K,), dtype, seed)
    b = random_input((offset + batch * K * N,), dtype, seed + 1)
    out = torch.full((offset + batch * M * N,), 7.0, dtype=dtype)

    def make(a, b):
        return (a[offset:].view(batch, M, K), b[offset:].view(batch, K, N))

    run_both([a, b], make, out, lambda o: o[offset:].view(batch, M, N), batch, M, N, K)


SIZES_F32 = [(1, 1, 1), (127, 129, 8), (128, 128, 16), (129, 127, 9), (255, 257, 7), (256, 128, 33),
             (31, 33, 4097), (1, 300, 64), (300, 1, 64), (130, 4, 12)]
SIZES_F64 = [(1, 1, 1), (63, 65, 8), (64, 64, 16), (65, 63, 9), (129, 127, 7), (31, 33, 4097)]


@pytest.mark.parametrize("M,N,K", SIZES_F32)
@pytest.mark.parametrize("offset", [0, 1])
def test_float32_tiles(M, N, K, offset):
    contiguous_case(1, M, N, K, torch.float32, seed=M + N + K, offset=offset)


@pytest.mark.parametrize("M,N,K", SIZES_F64)
def test_float64_tiles(M, N, K):
    contiguous_case(1, M, N, K, torch.float64, seed=M + N + K)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [0, 1, 4, 255, 256, 257, 4097])
def test_batched_and_k_edges(dtype, K):
    contiguous_case(3, 129, 65, K, dtype, seed=K)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [16384, 16385, 2 * 16384 + 300])
def test_sums_of_several_groups(dtype, K):
    """Past 16,384 k the running totals live in scratch beside C: batch 2, rows and columns
    past one tile, a strided output."""
    a = random_input((2, 9, K), dtype, K)
    b = random_input((2, K, 130), dtype, K + 1)
    out = torch.full((2, 130, 2 * 9), 3.0, dtype=dtype)
    run_both([a, b], lambda a, b: (a, b), out, lambda o: o[:, :, ::2].transpose(1, 2), 2, 9, 130, K)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [513, 70_000])
def test_split_k_for_few_tiles(dtype, K):
    """A weight gradient's shape: one or two output tiles and a long k, which the GPU cuts into
    slices of whole chunks; each output's chunk chains are combined in chunk order afterwards."""
    contiguous_case(1, 8, 20, K, dtype, seed=K)
    a = random_input((2, 130, K), dtype, K + 2)  # batch 2, rows past a tile, A transposed (scalar loads)
    b = random_input((2, K, 140), dtype, K + 3)
    out = torch.full((2, 130, 140), 5.0, dtype=dtype)
    run_both([a, b], lambda a, b: (a.transpose(1, 2).contiguous().transpose(1, 2), b), out, lambda o: o,
             2, 130, 140, K)


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_k_turned_off_gives_the_same_bits(dtype, monkeypatch):
    """REPMODE_CUDA_SPLIT_K=0 (the benchmark's A/B switch) walks all of k in one block per tile."""
    monkeypatch.setenv("REPMODE_CUDA_SPLIT_K", "0")
    contiguous_case(1, 8, 20, 70_000, dtype, seed=11)


@pytest.mark.parametrize("dtype", DTYPES)
def test_unsplit_k_with_many_tiles(dtype):
    """132 one-element tiles (batch 132, 1 x 1 outputs) are enough to fill the GPU, so k is not
    split: each block folds its chunks into C and its groups into the totals in scratch."""
    contiguous_case(132, 1, 1, 16384 + 700, dtype, seed=5)
    contiguous_case(132, 3, 5, 600, dtype, seed=6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["A", "B", "both"])
def test_batch_stride_zero(dtype, which):
    batch, M, N, K = 4, 70, 130, 20
    a = random_input((batch, M, K), dtype, 3)
    b = random_input((batch, K, N), dtype, 4)
    out = torch.zeros(batch, M, N, dtype=dtype)

    def make(a, b):
        A = a[0].expand(batch, M, K) if which in ("A", "both") else a
        B = b[0].expand(batch, K, N) if which in ("B", "both") else b
        return A, B

    run_both([a, b], make, out, lambda o: o, batch, M, N, K)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["At", "Bt", "AtBt", "sliced", "Ct", "Csliced"])
def test_transposed_and_sliced(dtype, layout):
    batch, M, N, K = 2, 131, 97, 45
    a = random_input((batch, 2 * K + 1, 2 * M + 3), dtype, 5)  # room for transposes and slices
    b = random_input((batch, 2 * N + 2, 2 * K + 5), dtype, 6)
    out = torch.full((batch, 2 * N + 1, 2 * M + 1), -3.0, dtype=dtype)

    def make(a, b):
        if layout in ("At", "AtBt"):
            A = a[:, :K, :M].transpose(1, 2)  # sAm = 1
        elif layout == "sliced":
            A = a[:, 1:2 * K + 1:2, 3:2 * M + 3:2].transpose(1, 2)  # strides 2 both ways
        else:
            A = a.reshape(batch, -1)[:, :M * K].reshape(batch, M, K)
        if layout in ("Bt", "AtBt"):
            B = b[:, :N, :K].transpose(1, 2)  # sBk = 1
        elif layout == "sliced":
            B = b[:, 2:2 * N + 2:2, 1:2 * K + 1:2].transpose(1, 2)
        else:
            B = b.reshape(batch, -1)[:, :K * N].reshape(batch, K, N)
        return A, B

    def make_out(o):
        if layout == "Ct":
            return o[:, :N, :M].transpose(1, 2)  # column-major C
        if layout == "Csliced":
            return o[:, 1::2, 1::2][:, :N, :M].transpose(1, 2)
        return o.reshape(batch, -1)[:, :M * N].reshape(batch, M, N)

    run_both([a, b], make, out, make_out, batch, M, N, K)


@pytest.mark.parametrize("dtype", DTYPES)
def test_specials_everywhere(dtype):
    """Rows and columns full of inf and NaN, and products that underflow to -0.0 (which a padded
    k step would turn into +0.0)."""
    M, N, K = 133, 140, 17
    a = random_input((M, K), dtype, 8)
    b = random_input((K, N), dtype, 9)
    a[5] = float("inf")
    a[6] = float("nan")
    b[:, 7] = float("-inf")
    tiny = torch.finfo(dtype).tiny
    a[9] = -tiny
    b[:, 11] = tiny  # output (9, 11): every fma underflows to -0.0
    out = torch.empty(M, N, dtype=dtype)
    run_both([a, b], lambda a, b: (a, b), out, lambda o: o, 1, M, N, K)


def test_negative_zero_through_the_last_k_tile():
    for K in (1, 8, 9, 15, 256, 600):  # 600: -0.0 chunk partials joined by the group's sum
        a = torch.full((3, K), -torch.finfo(torch.float32).tiny)
        b = torch.full((K, 5), torch.finfo(torch.float32).tiny)
        out = torch.empty(3, 5)
        run_both([a, b], lambda a, b: (a, b), out, lambda o: o, 1, 3, 5, K)


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty(dtype):
    for batch, M, N in ((0, 4, 4), (2, 0, 4), (2, 4, 0)):
        a = random_input((max(batch, 1) * max(M, 1) * 3,), dtype, 1)
        b = random_input((max(batch, 1) * 3 * max(N, 1),), dtype, 2)
        out = torch.full((max(batch, 1) * max(M, 1) * max(N, 1),), 5.0, dtype=dtype)
        run_both([a, b], lambda a, b: (a[:batch * M * 3].view(batch, M, 3), b[:batch * 3 * N].view(batch, 3, N)),
                 out, lambda o: o[:batch * M * N].view(batch, M, N), batch, M, N, 3)


def test_large_square():
    contiguous_case(1, 1024, 1024, 1024, torch.float32, seed=11)

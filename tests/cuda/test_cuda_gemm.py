"""repmode._C_cuda.gemm equals repmode._C.gemm bit for bit: shapes around the kernel's tiles
(128 x 128 x 8 for float32, its narrow 64 x 128 and 128 x 64 x 16 tiles, 64 x 64 x 8 for
float64), K = 0, 1 and a partial last k-tile, the boundaries of the four levels of the order over
k (chains of 16, chunks of 256, groups of 16,384), sums of several groups, the short float32 rule
(K <= 32: one thread per output, in float64, rounded once; K = 32 / 33 on either side of it), split
k (few output tiles: slices of k in separate blocks, combined by a second kernel) and the unsplit
multi-chunk path (132 tiles or more, the kernel's threshold), batch strides 0, transposed and
sliced operands (the scalar-load path) and aligned contiguous ones (the float4 path), strided
outputs, NaN / inf / -0.0 / subnormal inputs, and short float32 sums whose float32 chain would
overflow where float64 does not (and the reverse)."""
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


def contiguous_case(batch, M, N, K, dtype, seed=0, offset=0, specials=True):
    """Row-major A, B, C; `offset` elements into their storage (1 breaks the float4 alignment).
    Without `specials` every output is finite, so the order's rounding shows in every one."""
    a = random_input((offset + batch * M * K,), dtype, seed, specials)
    b = random_input((offset + batch * K * N,), dtype, seed + 1, specials)
    out = torch.full((offset + batch * M * N,), 7.0, dtype=dtype)

    def make(a, b):
        return (a[offset:].view(batch, M, K), b[offset:].view(batch, K, N))

    run_both([a, b], make, out, lambda o: o[offset:].view(batch, M, N), batch, M, N, K)


# K <= 32 runs the short float32 path; the same tile edges with K > 32 run the tile kernel.
SIZES_F32 = [(1, 1, 1), (127, 129, 8), (128, 128, 16), (129, 127, 9), (255, 257, 7), (256, 128, 33),
             (31, 33, 4097), (1, 300, 64), (300, 1, 64), (130, 4, 12), (127, 129, 40), (128, 128, 48),
             (129, 127, 41), (255, 257, 39), (130, 4, 36)]
SIZES_F64 = [(1, 1, 1), (63, 65, 8), (64, 64, 16), (65, 63, 9), (129, 127, 7), (31, 33, 4097)]


@pytest.mark.parametrize("M,N,K", SIZES_F32)
@pytest.mark.parametrize("offset", [0, 1])
def test_float32_tiles(M, N, K, offset):
    contiguous_case(1, M, N, K, torch.float32, seed=M + N + K, offset=offset)


@pytest.mark.parametrize("M,N,K", SIZES_F64)
def test_float64_tiles(M, N, K):
    contiguous_case(1, M, N, K, torch.float64, seed=M + N + K)


# The level boundaries: chains (16), the short float32 rule (32), chunks (256), and 309 = one
# chunk, three chains and five k (a partial last chain after whole ones in the second chunk).
K_EDGES = [0, 1, 4, 15, 16, 17, 31, 32, 33, 255, 256, 257, 16 * 16 + 16 * 3 + 5, 4097]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", K_EDGES)
def test_batched_and_k_edges(dtype, K):
    contiguous_case(3, 129, 65, K, dtype, seed=K)
    contiguous_case(3, 129, 65, K, dtype, seed=K + 1, specials=False)


@pytest.mark.parametrize("K", [15, 16, 17, 31, 32, 33, 16 * 16 + 16 * 3 + 5])
@pytest.mark.parametrize("M,N", [(40, 130), (130, 40)])
@pytest.mark.parametrize("offset", [0, 1])
def test_narrow_tiles_at_k_edges(M, N, K, offset):
    """The narrow float32 tiles (64 x 128 and 128 x 64) take 16 k per tile: one chain each."""
    contiguous_case(2, M, N, K, torch.float32, seed=M + K, offset=offset, specials=False)


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
@pytest.mark.parametrize("K", [513, 2 * 256 * 3 + 37, 70_000])
def test_split_k_for_few_tiles(dtype, K):
    """A weight gradient's shape: one or two output tiles and a long k, which the GPU cuts into
    slices of whole chunks; each output's chunk chains are combined in chunk order afterwards."""
    contiguous_case(1, 8, 20, K, dtype, seed=K)
    contiguous_case(1, 8, 20, K, dtype, seed=K + 4, specials=False)
    a = random_input((2, 130, K), dtype, K + 2, specials=False)  # batch 2, rows past a tile, A transposed
    b = random_input((2, K, 140), dtype, K + 3, specials=False)  # (scalar loads)
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
@pytest.mark.parametrize("K", [20, 45])  # float32: the short path and the tile kernel
def test_batch_stride_zero(dtype, which, K):
    batch, M, N = 4, 70, 130
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
@pytest.mark.parametrize("K", [21, 45])  # float32: the short path and the tile kernel
def test_transposed_and_sliced(dtype, layout, K):
    batch, M, N = 2, 131, 97
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
@pytest.mark.parametrize("K", [17, 300])  # float32: a short sum and a long one
def test_specials_everywhere(dtype, K):
    """Rows and columns full of inf and NaN, and products that underflow to -0.0 (which a padded
    k step would turn into +0.0)."""
    M, N = 133, 140
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
    for K in (1, 8, 9, 15, 16, 17, 33, 256, 600):  # 600: -0.0 chunk partials joined by the group's sum
        a = torch.full((3, K), -torch.finfo(torch.float32).tiny)
        b = torch.full((K, 5), torch.finfo(torch.float32).tiny)
        out = torch.empty(3, 5)
        run_both([a, b], lambda a, b: (a, b), out, lambda o: o, 1, 3, 5, K)


def short_float32_rows(K: int) -> torch.Tensor:
    """Rows of A (K <= 32) whose sums with a column of ones differ between a float32 chain and
    float64 rounded once: max + max - max (float32 overflows on the way, float64 gives max),
    max + max (inf either way), 2^100 * 2^100 products (exact in float64, inf in float32) that
    cancel, products under float32's smallest subnormal (+-0.0 after the rounding), inf - inf."""
    big, tiny = torch.finfo(torch.float32).max, torch.finfo(torch.float32).tiny
    rows = torch.zeros(8, K)
    rows[0, :3] = torch.tensor([big, big, -big])
    rows[1, :2] = big
    rows[2, :2] = torch.tensor([2.0 ** 100, -(2.0 ** 100)])
    rows[3, :2] = -tiny
    rows[4, :2] = torch.tensor([tiny, -tiny])
    rows[5, :2] = torch.tensor([float("inf"), float("-inf")])
    rows[6, 1] = float("nan")
    rows[7] = torch.linspace(-1.0, 1.0, K) * big / 4
    return rows


@pytest.mark.parametrize("K", [3, 16, 17, 32])
def test_short_float32_sums_round_once(K):
    """A short float32 sum is float64's value rounded once: inf exactly where that value
    overflows float32, finite where only a float32 chain would overflow; -0.0 and NaN as the CPU."""
    a = short_float32_rows(K)
    b = torch.ones(K, 6)
    b[:, 2] = 2.0 ** 100  # row 2 times column 2: 2^200 - 2^200 in float64
    b[:, 3] = torch.finfo(torch.float32).tiny  # rows 3, 4 times column 3: below the subnormals
    b[:, 4] = -1.0
    b[:, 5] = 0.5
    M = a.shape[0]
    run_both([a, b], lambda a, b: (a, b), torch.empty(M, 6), lambda o: o, 1, M, 6, K)
    run_both([a, b], lambda a, b: (a.t().contiguous().t(), b.t().contiguous().t()), torch.empty(6, M),
             lambda o: o.t(), 1, M, 6, K)  # column-major A, B and C


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

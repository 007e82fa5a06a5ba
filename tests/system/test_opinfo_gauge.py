"""The OpInfo harness's comparison of singular and eigenvectors (tests/support/opinfo_gauge.py):
equal up to one sign per singular triplet (applied to u and v together) or eigenvector, clusters
by their invariant part, repmode's own sign rule checked exactly — and everything else still fails."""
from __future__ import annotations

import pytest
import torch
from support import opinfo_gauge as gauge
from support import opinfo_harness as h

import repmode


def _orth(n, seed):
    q, r = torch.linalg.qr(torch.randn(n, n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


def _matrix(m, n, s, seed=0):
    """U diag(s) Vᵀ in float32 with the given singular values."""
    k = min(m, n)
    U, V = _orth(m, seed)[:, :k], _orth(n, seed + 1)[:, :k]
    return ((U * torch.tensor(s, dtype=torch.float64)) @ V.mT).float()


def _svd(A, full=False):
    native = torch.linalg.svd(A, full_matrices=full)
    with repmode.enabled():
        got = torch.linalg.svd(A, full_matrices=full)
    return [t.clone() for t in got], native


def _verdict(kind, got, native):
    """None if the harness's gauge comparison passes (assert_close per leaf; the float64 judge is not
    consulted here), else why not."""
    broken = gauge.checks(kind, got, native)
    if broken:
        return broken
    got_leaves = gauge.leaves(kind, got, native)
    want = [t for _, t in gauge.leaves(kind, native, native)]
    why = h._compare("out", [t for _, t in got_leaves], want, True, [n for n, _ in got_leaves])
    return why and why[0]


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_repmodes_svd_passes_though_its_signs_differ_from_lapacks(shape, full):
    A = _matrix(*shape, [1.5, 0.8, 1.2, 0.7][: min(shape)], seed=3)
    got, native = _svd(A, full)
    assert _verdict("linalg.svd", got, native) is None
    # the signs are not LAPACK's for every triplet on these inputs, so the gauge does real work:
    # flipping every triplet of native's result (u and v together) still passes too
    flipped = [-native[0], native[1], -native[2]]
    assert _verdict("linalg.svd", got, flipped) is None


def test_a_u_flipped_without_its_v_fails():
    A = _matrix(5, 3, [1.5, 0.8, 1.2])
    got, native = _svd(A)
    got[0][:, 1] = -got[0][:, 1]
    why = _verdict("linalg.svd", got, native)
    assert why is not None and ("u_1" in why or "v_1" in why)


def test_a_v_flipped_with_its_u_passes_the_comparison_but_breaks_repmodes_sign_rule():
    A = _matrix(5, 3, [1.5, 0.8, 1.2])
    got, native = _svd(A)
    got[0][:, 2] = -got[0][:, 2]
    got[2][2, :] = -got[2][2, :]
    assert "sign rule broken: v_2" in _verdict("linalg.svd", got, native)


def test_the_sign_rule_of_a_wide_matrix_is_on_u():
    A = _matrix(3, 5, [1.5, 0.8, 1.2])
    got, native = _svd(A)
    got[0][:, 0] = -got[0][:, 0]
    got[2][0, :] = -got[2][0, :]
    assert "sign rule broken: u_0" in _verdict("linalg.svd", got, native)


def test_swapped_triplets_fail():
    A = _matrix(5, 3, [1.5, 0.8, 1.2])
    got, native = _svd(A)
    got[0][:, [0, 1]] = got[0][:, [1, 0]]
    got[2][[0, 1], :] = got[2][[1, 0], :]
    assert _verdict("linalg.svd", got, native) is not None


def test_a_wrong_singular_value_fails():
    A = _matrix(5, 3, [1.5, 0.8, 1.2])
    got, native = _svd(A)
    got[1][1] += 1e-3
    assert "values" in _verdict("linalg.svd", got, native)


def test_repeated_singular_values_compare_the_clusters_part_and_pass_any_rotation_within_it():
    A = _matrix(6, 4, [2.0, 1.0, 1.0, 0.5], seed=5)
    got, native = _svd(A)
    labels = [name for name, _ in gauge.leaves("linalg.svd", got, native)]
    assert any("cluster 1..2" in name for name in labels), labels
    c, s = 0.6, 0.8  # rotate native's basis of the repeated pair: still a valid SVD
    U, S, Vh = (t.clone() for t in native)
    u1, u2, v1, v2 = U[:, 1].clone(), U[:, 2].clone(), Vh[1].clone(), Vh[2].clone()
    U[:, 1], U[:, 2] = c * u1 - s * u2, s * u1 + c * u2
    Vh[1], Vh[2] = c * v1 - s * v2, s * v1 + c * v2
    assert _verdict("linalg.svd", got, [U, S, Vh]) is None
    # but a cluster whose u and v rotate differently is another matrix: it fails
    U[:, 1], U[:, 2] = u1, u2
    assert "cluster 1..2" in _verdict("linalg.svd", got, [U, S, Vh])


def test_full_matrices_compare_the_complements_projector():
    A = _matrix(6, 3, [1.5, 0.8, 1.2], seed=7)
    got, native = _svd(A, full=True)
    labels = [name for name, _ in gauge.leaves("linalg.svd", got, native)]
    assert "U_t U_tᵀ of columns 3..5" in labels
    assert _verdict("linalg.svd", got, native) is None
    bad = [got[0].clone(), got[1], got[2]]
    bad[0][:, 4] = bad[0][:, 1]  # not orthonormal any more
    assert "not orthonormal" in _verdict("linalg.svd", bad, native)


def test_torch_svd_returns_v_not_vh():
    A = _matrix(4, 3, [1.5, 0.8, 1.2], seed=9)
    native = torch.svd(A)
    with repmode.enabled():
        got = [t.clone() for t in torch.svd(A)]
    assert _verdict("svd", got, native) is None
    got[2][:, 0] = -got[2][:, 0]
    assert _verdict("svd", got, native) is not None


def test_eigh_vectors_compare_up_to_sign_and_follow_repmodes_rule():
    X = torch.randn(5, 5, generator=torch.Generator().manual_seed(1))
    S = X + X.mT
    native = torch.linalg.eigh(S)
    with repmode.enabled():
        got = [t.clone() for t in torch.linalg.eigh(S)]
    assert _verdict("eigh", got, native) is None
    got[1][:, 3] = -got[1][:, 3]
    assert "sign rule broken: eigenvector_3" in _verdict("eigh", got, native)
    got[1][:, 3] = -got[1][:, 3]
    got[1][:, [1, 2]] = got[1][:, [2, 1]]
    assert _verdict("eigh", got, native) is not None


def test_the_harness_passes_svd_and_eigh_opinfos_that_it_once_failed_on_signs():
    ops = {h.key(op): op for op in h.float32_cpu_ops()}
    for name, first in (("linalg.svd", 32), ("linalg.eigh", 0)):
        op = ops[name]
        sample = h.samples(op, first + 1)[first]
        x = sample.input.detach()
        native = op(x, *sample.args, **sample.kwargs)
        with repmode.enabled():
            got = op(x, *sample.args, **sample.kwargs)
        assert h._compare("out", got, native, True) is not None  # entry by entry: the signs differ
        result = h.Result(name)
        h._check_sample(op, sample, first, result)  # raises _Stop on anything that does not pass
        assert result.samples_run == 1


def test_eigh_repeated_eigenvalues_compare_the_clusters_projector_per_matrix_of_a_batch():
    Q = torch.stack([_orth(4, 11), _orth(4, 12)])
    lam = torch.tensor([[-1.0, 2.0, 2.0, 3.0], [0.5, 1.0, 1.5, 2.0]], dtype=torch.float64)
    S = ((Q * lam[:, None, :]) @ Q.mT).float()
    native = torch.linalg.eigh(S)
    with repmode.enabled():
        got = [t.clone() for t in torch.linalg.eigh(S)]
    labels = [name for name, _ in gauge.leaves("eigh", got, native)]
    assert "[0] Q_c Q_cᵀ of cluster 1..2" in labels and not any(n.startswith("[1] Q_c") for n in labels), labels
    assert _verdict("eigh", got, native) is None
    c, s = 0.8, 0.6  # another orthonormal basis of matrix 0's repeated pair: still passes
    other = [native[0], native[1].clone()]
    q1, q2 = other[1][0, :, 1].clone(), other[1][0, :, 2].clone()
    other[1][0, :, 1], other[1][0, :, 2] = c * q1 - s * q2, s * q1 + c * q2
    assert _verdict("eigh", got, other) is None


def test_wide_full_matrices_compare_vs_complement():
    A = _matrix(3, 6, [1.5, 0.8, 1.2], seed=13)
    got, native = _svd(A, full=True)
    labels = [name for name, _ in gauge.leaves("linalg.svd", got, native)]
    assert "V_t V_tᵀ of columns 3..5" in labels and not any(n.startswith("U_t") for n in labels)
    assert _verdict("linalg.svd", got, native) is None

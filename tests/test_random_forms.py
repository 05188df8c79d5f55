"""The [GLPR] Fig 5 kinds of random_qkv: a GOE bilinear form, a Wishart value."""

import numpy as np

from attnlib.clustering import phase_diagram, random_qkv


def test_goe_form_is_a_symmetric_semicircle_form():
    Q, K, V = random_qkv(400, kind="goe_form", value="plus", rng=0)
    assert np.array_equal(Q, np.eye(400))
    A = Q.T @ K
    assert np.allclose(A, A.T)
    ev = np.linalg.eigvalsh(A)
    assert abs(ev.min() + 2) < 0.1 and abs(ev.max() - 2) < 0.1  # semicircle [-2, 2]
    assert np.allclose(V, A)


def test_wishart_value_is_positive_semi_definite_for_every_kind():
    for kind in ("ginibre", "goe", "goe_form"):
        _, _, V = random_qkv(200, kind=kind, value="wishart", rng=1, batch=2)
        ev = np.linalg.eigvalsh(V)
        assert np.all(ev > -1e-12)
        assert abs(ev.max() - 4) < 0.3  # Marchenko-Pastur edge (1 + 1)^2


def test_earlier_kinds_draw_the_same_matrices():
    # the new kinds leave the draws of the existing ones unchanged
    rng = np.random.default_rng(7)
    G = rng.standard_normal((2, 5, 5)) / np.sqrt(5)
    Q, K, _ = random_qkv(5, kind="ginibre", value="identity", rng=7)
    assert np.array_equal(Q, G[0]) and np.array_equal(K, G[1])


def test_phase_diagram_accepts_the_new_kinds():
    pd = phase_diagram(
        6,
        betas=[1.0, 4.0],
        samples=4,
        n=8,
        times=[0.0, 1.0, 2.0],
        qkv="goe_form/wishart",
        rng=0,
        progress=False,
    )
    assert pd.probability.shape == (2, 3)
    assert np.all((pd.probability >= 0) & (pd.probability <= 1))

"""The checking cells of the chapters fail when what they check is wrong.

Each test takes the source of one checking cell (the code cell after its target
``(label)=``), changes one constant or one formula in it (a *mutation*: the wrong
constant of a theorem, a wrong formula, a counter that misses a mode), executes it
after the chapter's imports and the cells it depends on, and expects the
``AssertionError`` of a named ``assert`` line of the cell. A mutation that does not
apply (its text is not in the cell) is an error, not a pass, and so is any other
exception: the cell must fail *at its check*, not by crashing.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
FENCE = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```$", re.S | re.M)


def _cells(chapter: str) -> list[tuple[str, int, str]]:
    """(target before the cell or "", line, source) of each code cell of a chapter."""
    text = (BOOK / f"{chapter}.md").read_text()
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip().splitlines()
        target = re.fullmatch(r"\((?P<t>[\w.:-]+)\)=", before[-1]) if before else None
        body = "\n".join(
            ln for ln in m["body"].splitlines() if not re.match(r"^:\w[\w-]*:", ln)
        )
        out.append(
            (target["t"] if target else "", text.count("\n", 0, m.start()), body)
        )
    return out


def cell_source(chapter: str, target: str) -> str:
    found = [src for t, _, src in _cells(chapter) if t == target]
    assert len(found) == 1, f"{chapter}: no single cell after ({target})="
    return found[0]


def run_mutated(chapter, target, mutations, *, before=(), setup=""):
    """Run the chapter's first cell, ``setup`` (names an earlier cell defines), the
    cells ``before`` (targets or indices), then the cell of ``target`` with each
    (old, new) replaced; return the source line of the failing assert, or None if
    the cell passed."""
    cells = _cells(chapter)
    ns: dict = {"__name__": f"mutation_{chapter}"}
    os.environ.setdefault("MPLBACKEND", "Agg")
    exec(compile(cells[0][2], f"{chapter}:imports", "exec"), ns)
    exec(setup, ns)
    for b in before:
        src = cells[b][2] if isinstance(b, int) else cell_source(chapter, b)
        exec(compile(src, f"{chapter}:{b}", "exec"), ns)
    src = cell_source(chapter, target)
    for old, new in mutations:
        assert old in src, f"the mutation {old!r} does not apply to ({target})="
        src = src.replace(old, new)
    name = f"<{chapter}:{target}>"
    try:
        exec(compile(src, name, "exec"), ns)
    except AssertionError:
        tb = traceback.extract_tb(sys.exc_info()[2])
        frames = [f for f in tb if f.filename == name]
        return src.splitlines()[frames[-1].lineno - 1].strip()
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    return None


# ------------------------------------------------------------------- frontiers
def test_fro_check_long_fails_with_a_wrong_exponent():
    # the formula with exponent gamma rho instead of gamma (1 - rho)
    line = run_mutated(
        "frontiers",
        "fro-check-long",
        [("** (gam * (1 - rho_))", "** (gam * rho_)")],
    )
    assert line == "assert worst < 1e-10"


def test_fro_check_long_fails_without_the_n_minus_one():
    line = run_mutated("frontiers", "fro-check-long", [("big + n_ - 1)", "big + n_)")])
    assert line == "assert worst < 1e-10"


def test_fro_check_modes_fails_when_the_counter_misses_a_mode():
    line = run_mutated(
        "frontiers",
        "fro-check-modes",
        [
            (
                "[[line_modes(x, beta=bl).count for",
                "[[line_modes(x, beta=bl).count - (bl > 500) for",
            )
        ],
    )
    assert line == "assert np.array_equal(counts_all, dense_all)"


def test_fro_check_modes_fails_with_the_old_hundredfold():
    line = run_mutated(
        "frontiers",
        "fro-check-modes",
        [("round(growth_line) == 47", "round(growth_line) == 100")],
    )
    assert line.startswith("assert np.all(np.diff(counts_line) > 0)")


# ----------------------------------------------------------------- extremisers
@pytest.mark.parametrize(
    "factor,failing",
    [
        ("1.01", "assert sampled.min() >= bound_neg and searched.min() >= bound_neg"),
        ("0.99", "assert searched.min() <= bound_neg * (1 + 1e-5)"),
    ],
)
def test_ext_check_min_negative_fails_with_a_wrong_bound(factor, failing):
    line = run_mutated(
        "extremisers",
        "ext-check-min-negative",
        [
            (
                "bound_neg = np.exp(np.linalg.eigvalsh(D_neg1).min())",
                f"bound_neg = {factor} * np.exp(np.linalg.eigvalsh(D_neg1).min())",
            )
        ],
    )
    assert line.startswith(failing)


@pytest.mark.parametrize(
    "old,new,failing",
    [
        # the lower constant e^(-||D||/2) in place of e^(-||D||)
        (
            "assert np.exp(-lam_w) * theta_w**2 * (1 - 1e-12) <= best",
            "assert np.exp(-lam_w / 2) * theta_w**2 * (1 - 1e-12) <= best",
            "assert np.exp(-lam_w / 2) * theta_w**2",
        ),
        # the upper constant e^(||D||/2) in place of e^(||D||)
        (
            "best <= np.exp(lam_w) * theta_w**2 * (1 + 1e-6)",
            "best <= np.exp(lam_w / 2) * theta_w**2 * (1 + 1e-6)",
            "assert arc[0] * (1 - 1e-6) < best <= np.exp(lam_w / 2)",
        ),
    ],
)
def test_ext_check_wm2_fails_with_a_wrong_constant(old, new, failing):
    line = run_mutated("extremisers", "ext-check-wm2", [(old, new)])
    assert line.startswith(failing)


# ------------------------------------------------------------------- modelling
def test_mod_check_dobrushin_fails_with_a_smaller_constant():
    # L = beta + 1 (the measure term forgotten): the built pair breaks the estimate
    line = run_mutated(
        "modelling",
        "mod-check-dobrushin",
        [
            (
                "L_adv = b_adv + 2 + (1 + 2 * b_adv) * np.exp(2 * b_adv)",
                "L_adv = b_adv + 1",
            )
        ],
        setup="from scipy.optimize import linear_sum_assignment",
    )
    assert line == "assert np.all(W_adv <= np.exp(L_adv * t_adv) * W_adv[0])"


# -------------------------------------------------------------------- gaussian
@pytest.mark.parametrize("wrong", ["-1 / b", "-2 / b**2", "-1 / b**3", "-0.5 + 0 * b"])
def test_gau_check_tail_deficit_fails_with_a_wrong_exponent(wrong):
    line = run_mutated(
        "gaussian",
        "gau-check-tail-deficit",
        [("    return -1 / b**2", f"    return {wrong}")],
        setup="from numpy.polynomial.hermite_e import hermegauss",
    )
    assert line.startswith("assert np.all(np.diff(D) < 0) and abs(slope / heuristic")


def test_mod_check_meanfield_fails_with_a_wrong_mean_field_solution():
    # the mean-field density solved at 1.5 beta: particles and density drift apart
    line = run_mutated(
        "modelling",
        "mod-check-meanfield",
        [
            (
                "rho = mean_field(rho_init, beta=beta_c,",
                "rho = mean_field(rho_init, beta=1.5 * beta_c,",
            )
        ],
    )
    assert line == (
        "assert all(-0.6 < s < -0.35 for s in slopes) and np.all(growth_W1 < 3)"
    )


@pytest.mark.parametrize(
    "old,new,failing",
    [
        # the constant of the layer error below its supremum 0.72
        ("layer_bound = 5", "layer_bound = 0.5", "assert ratio <= sup_layer"),
        # a layer without its renormalisation is not a retraction: the error is O(h)
        (
            "layer = (x + h * y) / np.linalg.norm(x + h * y)",
            "layer = x + h * y",
            "assert ratio <= sup_layer",
        ),
    ],
)
def test_mod_check_layers_fails_with_a_wrong_constant_or_layer(old, new, failing):
    # cells 2 and 3 of the chapter define the network run (errors, layers, T)
    line = run_mutated("modelling", "mod-check-layers", [(old, new)], before=(2, 3))
    assert line.startswith(failing)


@pytest.mark.parametrize("beta", ["0.9", "1.1"])
def test_mod_check_frozen_fails_with_a_wrong_beta(beta):
    line = run_mutated(
        "modelling",
        "mod-check-frozen",
        [
            (
                "args=(Z0.shape, np.eye(2), np.eye(2))",
                f"args=(Z0.shape, np.eye(2), {beta} * np.eye(2))",
            )
        ],
        setup="from scipy.integrate import solve_ivp",
    )
    assert line == "assert err_fo < 1e-3"


# ------------------------------------------------------------------ clustering
@pytest.mark.parametrize(
    "old,new,failing",
    [
        # a guaranteed rate above the true one (rate 1): the bound on the rescaled
        # tokens breaks
        (
            "lam_ind = np.exp(-2.0) * (X_ind @ w_unit).min()",
            "lam_ind = 1.2 + 0 * (X_ind @ w_unit).min()",
            "assert np.all(z_diam_ind <= D0_ind",
        ),
        # another dynamics (V = I / 2): the tokens still cluster, at rate 1/2
        (
            "simulate(Model(beta=1.0), X_ind",
            "simulate(Model(beta=1.0, V=0.5 * np.eye(16)), X_ind",
            "assert abs(rate_ind - 1) < 1e-3",
        ),
    ],
)
def test_clu_check_highd_fails_with_a_wrong_rate_or_dynamics(old, new, failing):
    line = run_mutated("clustering", "clu-check-highd", [(old, new)])
    assert line.startswith(failing)


@pytest.mark.parametrize(
    "old,new,failing",
    [
        # a Lipschitz constant below the lemma's: beta = 0 already reaches 6
        (
            "bound_lip = {b: 4 * b + 6 for",
            "bound_lip = {b: 4 * b + 5.9 for",
            "assert all(w <= bound_lip[b] * (1 + 1e-8)",
        ),
        # no search, only the random starts: the worst case is not found
        ('"maxiter": 3000', '"maxiter": 1', "assert all(abs(worst_lip[0.0, n_s] - 6)"),
    ],
)
def test_clu_check_equiangular_curve_fails_with_a_wrong_constant_or_search(
    old, new, failing
):
    line = run_mutated("clustering", "clu-check-equiangular-curve", [(old, new)])
    assert line.startswith(failing)


# the library's Gram field with its term G C taken out again, in the cell's namespace
GRAM_FIELD_WITHOUT_GC = """
_right_field = gram_field


def gram_field(G, beta):
    W = np.exp(beta * (G - G.max(axis=-1, keepdims=True)))
    c = np.einsum("...ii->...i", W / W.sum(axis=-1, keepdims=True) @ G)
    return _right_field(G, beta=beta) + G * c[..., None, :]
"""


def test_clu_check_equiangular_curve_fails_for_a_gram_field_without_its_gc_term():
    """The cell searches the Lipschitz constant of attnlib.gram_field; a Gram field
    without the term G C has another constant at beta = 0 than 6."""
    imports = "from scipy.optimize import minimize\n"
    line = run_mutated(
        "clustering",
        "clu-check-equiangular-curve",
        [(imports, imports + GRAM_FIELD_WITHOUT_GC)],
    )
    assert line.startswith("assert all(abs(worst_lip[0.0, n_s] - 6)"), line


@pytest.mark.parametrize(
    "old,new",
    [
        # Lambda without the 2M of the projection: ||V|| (1 + 2 beta ||P||)
        (
            "Lam_adv = Model(beta=0.0, V=V_adv), 3 *",
            "Lam_adv = Model(beta=0.0, V=V_adv), 1 *",
        ),
        # no search, only the random starts: the worst pair is not found
        ('options={"maxiter": 2000,', 'options={"maxiter": 1,'),
    ],
)
def test_mod_check_layers_fails_without_the_projection_term_or_the_search(old, new):
    line = run_mutated("modelling", "mod-check-layers", [(old, new)], before=(2, 3))
    assert line.startswith("assert 1.99 < lip_adv <= Lam_adv")


@pytest.mark.parametrize(
    "old,new",
    [
        # the nearest token of the other group at Theta - r' instead of Theta - 2r'
        ("np.cos(Theta - 2 * r_out)", "np.cos(Theta - r_out)"),
        # the nearest token of the own group at r' instead of 2r'
        ("exponent = np.cos(2 * r_out)", "exponent = np.cos(r_out)"),
    ],
)
def test_clu_check_exit_fails_with_a_wrong_exponent(old, new):
    # T_exit stays 50 times below the first exits with either exponent: the
    # proof's first step, on the configuration built against it, is what fails
    line = run_mutated("clustering", "clu-check-exit", [(old, new)])
    assert line == "assert np.all(F_ratio <= 1) and F_ratio.max() > 0.95"

"""Realistic wrong submissions of a5_extremisers, graded by tests/test_coursework.py.

Each mistake is a list of (old, new) replacements in the code cells of the solution
notebook and the exact score of every question it affects; every other autograded
question must keep its full marks. Points per test case: q1_energy 1+1+1 public,
1 hidden; q2_field 1+1 public, 1 hidden; q3_ascent_step 1+1 public, 1 hidden;
q4_derive 1+1+1 public, 1 hidden; q5_basins 1+1 public, 1 hidden.
"""

MISTAKES = [
    {
        "name": "the paper's factor 1/2 in front of the energy",
        "replace": [
            (
                "        return float(w @ np.exp(G) @ w)",
                "        return float(0.5 * w @ np.exp(G) @ w)",
            )
        ],
        # only the plain energy is halved: the log-sum-exp case (public, log=True
        # only) keeps its point; the uniform, the weighted and the hidden cases fail.
        "scores": {"q1_energy": 1.0},
    },
    {
        "name": "unnormalised weights: weights=None taken as ones instead of 1/n",
        "replace": [
            (
                "    w = np.full(n, 1.0 / n) if weights is None else np.asarray(",
                "    w = np.ones(n) if weights is None else np.asarray(",
            )
        ],
        # the weighted case passes (explicit weights, and the single Dirac has n = 1);
        # the uniform case, the log case (log n^2 too large) and the hidden case fail.
        # The field of q2 sets its own weights and is not affected.
        "scores": {"q1_energy": 1.0},
    },
    {
        "name": "field without the tangent projection",
        "replace": [
            (
                "    return F - np.sum(F * X, axis=1, keepdims=True) * X",
                "    return F",
            )
        ],
        # q2: the field, the gradient (2 w_i V_i) and the hidden case all fail.
        # q3: the step still retracts and still increases the energy, but the radial
        # part of the field shortens the step by 1/(1 + h <x_i, F_i>): it differs
        # from attnlib's at order h^2, far above the tolerance 1e-10, in every case.
        "scores": {"q2_field": 0.0, "q3_ascent_step": 0.0},
    },
    {
        "name": "descent instead of ascent in the step",
        "replace": [
            (
                "    Y = X + h * interaction_field(X, D)",
                "    Y = X - h * interaction_field(X, D)",
            )
        ],
        # the energy decreases in the first public case; every case fails
        "scores": {"q3_ascent_step": 0.0},
    },
    {
        "name": "antipodal pair with the cross term counted once",
        "replace": [
            (
                "E_pair = sum(mass[s] * mass[t] * sp.exp(s * t * lam) "
                "for s in signs for t in signs)",
                "E_pair = (p**2 + (1 - p) ** 2) * sp.exp(lam) "
                "+ p * (1 - p) * sp.exp(-lam)",
            )
        ],
        # p_crit is still 1/2, but E_half is e^lam/2 + e^-lam/4, not cosh(lam): the
        # pair case, the p_crit/E_half/lam_star case and the hidden case fail; the
        # rectangle case (1 point) passes.
        "scores": {"q4_derive": 1.0},
    },
    {
        "name": "pairs classified by the mean of x_i1 without the absolute value",
        "replace": [
            (
                "    on_axis = np.abs(final).mean(axis=1)",
                "    on_axis = final.mean(axis=1)",
            )
        ],
        # half of a pair sits at -e_1: its mean is far below 0.99 and every pair is
        # labelled "other", in the classification case, in the reported outcomes
        # and in the hidden case.
        "scores": {"q5_basins": 0.0},
    },
]

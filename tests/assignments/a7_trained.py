"""Realistic wrong submissions of a7_trained, graded by tests/test_coursework.py.

Points per test case: q1_pair_histogram 1+1+1 public, 1 hidden; q2_effective_rank
1+1 public, 1 hidden; q3_collapse_rate 1+1 public, 1 hidden; q4_layer_expansion 1+1
public, 1 hidden.
"""

MISTAKES = [
    {
        "name": "rows not normalised before the inner products",
        "replace": [
            (
                "    X = Z / np.linalg.norm(Z, axis=1, keepdims=True)\n"
                "    iu = np.triu_indices(X.shape[0], 1)",
                "    X = Z\n    iu = np.triu_indices(X.shape[0], 1)",
            )
        ],
        # every case has rows of other norms than one: all four fail
        "scores": {"q1_pair_histogram": 0.0},
    },
    {
        "name": "squared singular values in the effective rank",
        "replace": [("    p = s / s.sum()", "    p = s**2 / np.sum(s**2)")],
        # rank one and the identity have equal singular values (first case passes);
        # diag(3, 1) and the random matrices fail
        "scores": {"q2_effective_rank": 1.0},
    },
    {
        "name": "pre-LN rate fitted against k instead of log k",
        "replace": [
            (
                "np.polyfit(np.log(k_pre), np.log(d_pre[k_pre]), 1)",
                "np.polyfit(k_pre, np.log(d_pre[k_pre]), 1)",
            )
        ],
        # the layers are right (first case passes); slope_pre is about -0.002, so
        # the public rate case and the hidden case fail
        "scores": {"q3_collapse_rate": 1.0},
    },
    {
        "name": "layer norm left out of the expansion",
        "replace": [
            ("xn = step / sp.sqrt(step.dot(step))", "xn = step"),
        ],
        # first_order = y, second_order = 0; gap2 = -(second order of the retraction)
        "scores": {"q4_layer_expansion": 0.0},
    },
]

"""Realistic wrong submissions of a8_frontiers2, graded by tests/test_coursework.py.

Points per test case: q1_scale_function 1+1+1 public, 1 hidden; q2_monte_carlo 1+1
public, 1 hidden; q3_transition_beta 1+1 public, 1 hidden; q4_transition_kind 1+1
public, 1 hidden; q5_square_root 1+1 public, 1 hidden.
"""

MISTAKES = [
    {
        "name": "P(u -> +1): the scale density integrated from -1 to u0",
        "replace": [
            (
                "    top = quad(scale, u0, 1.0, limit=200)[0]",
                "    top = quad(scale, -1.0, u0, limit=200)[0]",
            )
        ],
        # 1 - P: right at u0 = 0 on the circle only, so the circle case (u0 = 0.5),
        # the two values and the hidden case fail; the merging cases and beta_c
        # pass (1 of 4)
        "scores": {"q1_scale_function": 1.0},
    },
    {
        "name": "threshold beta_c = arccosh(d - 2), the factor 1/2 forgotten",
        "replace": [
            (
                "    return float(np.arccosh(d - 2) / 2)",
                "    return float(np.arccosh(d - 2))",
            )
        ],
        # beta_c(3) = 0 still, beta_c(4) and the hidden thresholds fail; the
        # probabilities (which test cosh 2 beta > d - 2 directly) pass: 2 of 4
        "scores": {"q1_scale_function": 2.0},
    },
    {
        "name": "Wald interval instead of Wilson's",
        "replace": [
            (
                "    centre = (p + z * z / (2 * n)) / (1 + z * z / n)\n"
                "    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) "
                "/ (1 + z * z / n)",
                "    centre = p\n    half = z * np.sqrt(p * (1 - p) / n)",
            )
        ],
        # the interval cases fail (public and hidden); the run and its count pass,
        # and the Wald interval still holds the limit
        "scores": {"q2_monte_carlo": 1.0},
    },
    {
        "name": "Bessel orders d + 1 and d instead of d/2 + 1 and d/2",
        "replace": [
            (
                "        return iv(d / 2 + 1, b) / iv(d / 2, b) - 1 / d",
                "        return iv(d + 1, b) / iv(d, b) - 1 / d",
            )
        ],
        # another root (or none in the bracket) for every d
        "scores": {"q3_transition_beta": 0.0},
    },
    {
        "name": "kind of transition read from the sign of A backwards",
        "replace": [
            (
                '    kind_q4[_beta] = "discontinuous" if band.size else "continuous"',
                '    kind_q4[_beta] = "discontinuous" if A_q4[_beta] < 0 else '
                '"continuous"',
            )
        ],
        # landau and A_q4 are right (first case passes); kind_q4 is reversed
        "scores": {"q4_transition_kind": 1.0},
    },
    {
        "name": "dimension left out of the Landau amplitude",
        "replace": [
            (
                "np.sqrt(eps_q5[-1] / (3 * abs(landau(1.0, 3))))",
                "np.sqrt(eps_q5[-1] / abs(landau(1.0, 3)))",
            )
        ],
        # ratio_q5 is 1/sqrt(3): the ratio case and the hidden case fail
        "scores": {"q5_square_root": 1.0},
    },
]

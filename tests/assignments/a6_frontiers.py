"""Realistic wrong submissions of a6_frontiers, graded by tests/test_coursework.py."""

MISTAKES = [
    {
        "name": "attention computed from the unnormalised tokens",
        "replace": [("    L = beta * (X @ X.T)", "    L = beta * (Y @ Y.T)")],
        # q1: the peri = normalised pre case and the edge case (beta = 0, unit rows,
        # the ValueError) pass: 2 of 4 points; q2 runs the wrong velocity: the
        # logits grow with the radius, the tokens freeze and every case fails
        "scores": {"q1_ln_velocity": 2.0, "q2_preln_rate": 0.0},
    },
    {
        "name": "peri-LN update not normalised",
        "replace": [
            (
                "    return U / np.linalg.norm(U, axis=1, keepdims=True)",
                "    return U",
            )
        ],
        # the pre-LN case and the edge case pass (2 of 4); q2 uses pre-LN only
        "scores": {"q1_ln_velocity": 2.0},
    },
    {
        "name": "Legendre integral without the factor 1/2 of the uniform measure",
        "replace": [
            (
                "c0 = sp.simplify(sp.integrate(sp.exp(beta * t) * sp.legendre(0, t), "
                "(t, -1, 1)) / 2)",
                "c0 = sp.simplify(sp.integrate(sp.exp(beta * t) * sp.legendre(0, t), "
                "(t, -1, 1)))",
            ),
            (
                "c1 = sp.simplify(sp.integrate(sp.exp(beta * t) * sp.legendre(1, t), "
                "(t, -1, 1)) / 2)",
                "c1 = sp.simplify(sp.integrate(sp.exp(beta * t) * sp.legendre(1, t), "
                "(t, -1, 1)))",
            ),
        ],
        # c0 and c1 are doubled (their case fails); sigma_c is a ratio and is right
        "scores": {"q3_noise_threshold": 2.0},
    },
    {
        "name": "ties not split: np.argmax keeps the first maximiser",
        "replace": [
            (
                "    H = (S >= top - 1e-12 * scale).astype(float)",
                "    H = np.eye(S.shape[0])[np.argmax(S, axis=1)]",
            )
        ],
        # random tokens have no ties (public case passes); the tie cases fail
        "scores": {"q4_hardmax_step": 1.0},
    },
    {
        "name": "distance between angles not reduced modulo 2 pi",
        "replace": [
            (
                "        dist = np.abs(np.angle(np.exp(1j * (a - np.array(centres)))))",
                "        dist = np.abs(a - np.array(centres))",
            )
        ],
        # every case has angles on both sides of zero (or of 2 pi): all fail
        "scores": {"q5_renyi_clusters": 0.0},
    },
]

"""Realistic wrong submissions of a3_gaussian, graded by tests/test_coursework.py."""

MISTAKES = [
    {
        "name": "A = beta Q^T K: query and key swapped in the tilt",
        "replace": [("    A = beta * K.T @ Q\n", "    A = beta * Q.T @ K\n")],
        # moment_rhs calls softmax_gaussian_field, so both questions lose everything.
        "scores": {"q1_affine_field": 0.0, "q2_moment_equations": 0.0},
    },
    {
        "name": "covariance equation V Sigma A Sigma without its transpose term",
        "replace": [
            (
                "    dSigma = M @ Sigma + Sigma @ M.T\n",
                "    dSigma = M @ Sigma\n",
            )
        ],
        # the two dalpha cases (public and hidden, 1 point each) still pass
        "scores": {"q2_moment_equations": 2.0},
    },
    {
        "name": "spurious V Sigma + Sigma V^T terms in the covariance equation",
        "replace": [
            (
                "    dSigma = M @ Sigma + Sigma @ M.T\n",
                "    dSigma = M @ Sigma + Sigma @ M.T + V @ Sigma + Sigma @ V.T\n",
            )
        ],
        # the two dalpha cases still pass
        "scores": {"q2_moment_equations": 2.0},
    },
    {
        "name": "sign error in the Riccati closed form",
        "replace": [
            (
                "np.linalg.inv(np.linalg.inv(Sigma0) - t * (A + A.T))",
                "np.linalg.inv(np.linalg.inv(Sigma0) + t * (A + A.T))",
            )
        ],
        # q3: the two blow-up time cases still pass. q5: trace_exact comes from
        # riccati_sigma, so the trace_exact case and the hidden case (lag_ratio) fail;
        # the particle case (seed, N, early agreement) still passes.
        "scores": {"q3_riccati": 2.0, "q5_particles": 1.0},
    },
    {
        "name": "blow-up time from lambda_max(A + A^T), no Sigma0^1/2 congruence",
        "replace": [
            (
                "    lam = np.linalg.eigvalsh(R @ (A + A.T) @ R)[-1]\n",
                "    lam = np.linalg.eigvalsh(A + A.T)[-1]\n",
            )
        ],
        # the two Sigma(t) cases still pass
        "scores": {"q3_riccati": 2.0},
    },
    {
        "name": "reference configuration without the 1/sqrt(d_k) scaling (beta = 1)",
        "replace": [
            (
                "model_ref = Model(beta=BETA_REF, Q=Q_REF, K=K_REF,"
                ' geometry="euclidean")',
                'model_ref = Model(Q=Q_REF, K=K_REF, geometry="euclidean")',
            ),
            ("A_ref = BETA_REF * K_REF.T @ Q_REF", "A_ref = K_REF.T @ Q_REF"),
        ],
        # t* = 0.4283 < 0.5: trace_exact is wrong, and the cloud is 12% off the
        # reference Gaussian already at t = 0.2.
        "scores": {"q5_particles": 0.0},
    },
    {
        "name": "1-d mean equation without the v alpha term",
        "replace": [
            (
                "v * (1 + a * sigma2_t) * m(t)",
                "v * a * sigma2_t * m(t)",
            )
        ],
        # sigma2_t and t_star_1d (1 point each) are still right
        "scores": {"q4_derive_1d": 2.0},
    },
]

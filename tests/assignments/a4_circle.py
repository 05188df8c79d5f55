"""Realistic wrong submissions of a4_circle, graded by tests/test_coursework.py."""

MISTAKES = [
    {
        "name": "sign error: sin(theta_j - theta_i) under the minus sign",
        "replace": [
            (
                "diff = theta[:, None] - theta[None, :]",
                "diff = theta[None, :] - theta[:, None]",
            )
        ],
        # every case of q1 compares a non-zero velocity (beta = 0 included)
        "scores": {"q1_direct_velocity": 0.0},
    },
    {
        "name": "SA normalised like USA (divides by n instead of Z_i)",
        "replace": [
            (
                "        return -num / np.sum(W, axis=1)",
                "        return -np.exp(beta) * num / n",
            )
        ],
        # the USA case and the edge case (beta = 0, where SA = USA = Kuramoto, and
        # n = 1) pass: 2 of 4 points; the SA case and the hidden case fail
        "scores": {"q1_direct_velocity": 2.0},
    },
    {
        "name": "Bessel index off by one in the sine coefficients",
        "replace": [
            (
                "b = iv(ks - 1, beta) - iv(ks + 1, beta)",
                "b = iv(ks, beta) - iv(ks + 2, beta)",
            )
        ],
        "scores": {"q2_fourier_velocity": 0.0},
    },
    {
        "name": "sine coefficients as 2k I_k(beta)/beta (0/0 at beta = 0)",
        "replace": [
            (
                "b = iv(ks - 1, beta) - iv(ks + 1, beta)",
                "b = 2 * ks * iv(ks, beta) / beta",
            )
        ],
        # correct for beta > 0: the K = 1 case and the K = 30 case pass (2 of 4
        # points); the beta = 0 case and the hidden case (which has beta = 0) get NaN
        "scores": {"q2_fourier_velocity": 2.0},
    },
    {
        "name": "uniform density taken as 1 instead of 1/(2 pi) in the linearisation",
        "replace": [("rho0 = 1 / (2 * sp.pi)", "rho0 = 1")],
        # b_k is still right (1 of 3 points); lam_usa is 2 pi times too large (lam_sa
        # happens to be right, the factor cancels in Z[rho_0]), so the public rate
        # case and the hidden case fail
        "scores": {"q3_growth_rates": 1.0},
    },
    {
        "name": "most unstable mode returned as the 0-based argmax index",
        "replace": [
            (
                "    return int(ks[np.argmax(ks**2 * iv(ks, beta))])",
                "    return int(np.argmax(ks**2 * iv(ks, beta)))",
            )
        ],
        # the simulation then runs to the horizon of mode 3 instead of 4 at beta = 9
        # (19% longer): still 4 clusters, so the reported count passes (1 of 3 points)
        "scores": {"q4_mode_selection": 1.0},
    },
    {
        "name": "order parameter without the 1/n (a sum instead of a mean)",
        "replace": [
            (
                "    z = np.mean(np.exp(1j * np.asarray(theta, dtype=float)))",
                "    z = np.sum(np.exp(1j * np.asarray(theta, dtype=float)))",
            )
        ],
        # measure_r averages the student's order parameter: every case of q6 fails
        "scores": {"q6_kuramoto": 0.0},
    },
]

"""Realistic wrong submissions of a2_clustering, graded by tests/test_coursework.py.

Each mistake is a list of (old, new) replacements in the code cells of the solution
notebook and the exact score of every question it affects; every other autograded
question must keep its full marks. Points per test case: q1_equiangular_rate 1+1+1
public, 1 hidden; q2_count_clusters 1+1 public, 1 hidden; q3_derive 1+1+1 public
(rates, ODE, hitting time), 1 hidden; q4_transition 1+1 public (t_gamma, t_half
plausibility), 1+1 hidden (hitting_time, t_half exact).
"""

MISTAKES = [
    {
        "name": "SA rate evaluated as written, e^(beta gamma) / (e^beta + ...)",
        "replace": [
            (
                "        return core / (np.exp(beta * (1.0 - g)) + (n - 1))",
                "        return core * np.exp(beta * g) / (np.exp(beta) + (n - 1) * "
                "np.exp(beta * g))",
            )
        ],
        # right for moderate beta; only the beta = 800 case gets inf / inf = nan (the
        # hidden case stops at beta = 40). q4 integrates at beta <= 7: unaffected.
        "scores": {"q1_equiangular_rate": 3.0},
    },
    {
        "name": "SA normalised like USA (divides by n instead of Z)",
        "replace": [
            (
                "        return core / (np.exp(beta * (1.0 - g)) + (n - 1))",
                "        return core * np.exp(beta * g) / n",
            )
        ],
        # q1 keeps the USA / beta = 0 case (SA = USA at beta = 0); beta = 800 overflows.
        # q4: hitting_time integrates the USA rate, so t_gamma and the hidden
        # hitting_time case fail; the two t_half cases do not use it and pass.
        "scores": {"q1_equiangular_rate": 1.0, "q4_transition": 2.0},
    },
    {
        "name": "clusters as distinct rows of the adjacency matrix, not components",
        "replace": [
            (
                "    label = np.full(X.shape[0], -1)",
                "    return len(np.unique(linked, axis=0))",
            )
        ],
        # right when every cluster is a clique (the +-e_1 case); the chain of 11 tokens
        # gives 11 distinct rows, and the hidden random states with delta = 0.3 and 1
        # have components that are not cliques.
        "scores": {"q2_count_clusters": 1.0},
    },
    {
        "name": "linked when <x_i, x_j> >= 1 - delta (non-strict inequality)",
        "replace": [
            ("    linked = X @ X.T > 1 - delta", "    linked = X @ X.T >= 1 - delta")
        ],
        # only the exact tie <x_1, x_2> = 0.5 = 1 - delta of the public chain case
        # tells the two rules apart; random inner products never tie.
        "scores": {"q2_count_clusters": 2.0},
    },
    {
        "name": "hitting time of the level delta instead of 1 - delta (derivation)",
        "replace": [
            (
                "sp.solve(sp.Eq(gamma_beta0, 1 - delta), t)",
                "sp.solve(sp.Eq(gamma_beta0, delta), t)",
            )
        ],
        # the rates and gamma_beta0 are right (2 points); the public t_hit case and
        # the hidden case (gamma_beta0 and t_hit_beta0 together) fail.
        "scores": {"q3_derive": 2.0},
    },
    {
        "name": "t_half from the first system only, not the ensemble mean",
        "replace": [
            (
                '    p_mean = run.observables["p"].mean(axis=1)',
                '    p_mean = run.observables["p"][:, 0]',
            )
        ],
        # one system still crosses 1/2 within 2 of Gamma (the public plausibility case
        # passes), but not at the time of the 64-system mean: the hidden case fails.
        "scores": {"q4_transition": 3.0},
    },
]

"""Realistic wrong submissions of a1_modelling, graded by tests/test_coursework.py.

Each mistake is a list of (old, new) replacements in the code cells of the solution
notebook and the exact score of every question it affects; every other autograded
question must keep its full marks. Points per test case: q1_attention 1+1+1 public,
1 hidden; q2_velocity 1+1 public, 1+1 hidden; q3_euler_step 1+1 public, 1 hidden;
q4_derive 1 public + 1 hidden for each part; q5_clusters 1 public, 1+1 hidden.
"""

MISTAKES = [
    {
        "name": "velocity without the tangent projection",
        "replace": [
            (
                "    return Y - np.sum(Y * X, axis=1, keepdims=True) * X",
                "    return Y",
            )
        ],
        # q3 keeps its unit-norm test (the step still retracts) but the step differs
        # from R(X + h P_x y) at order h^2.
        "scores": {"q2_velocity": 0.0, "q3_euler_step": 1.0},
    },
    {
        "name": "USA instead of SA normalisation (divides by n, not by Z_i)",
        "replace": [
            (
                "        W = np.exp(logits - logits.max(axis=1, keepdims=True))\n"
                "        return W / W.sum(axis=1, keepdims=True)",
                "        return np.exp(logits) / X.shape[0]",
            )
        ],
        # q1 keeps its USA test. q2 keeps the tangency test (the projection is right).
        # q3 keeps the unit-norm test and its hidden test, which uses USA.
        "scores": {"q1_attention": 1.0, "q2_velocity": 1.0, "q3_euler_step": 2.0},
    },
    {
        "name": "unstable softmax: no row maximum subtracted",
        "replace": [
            (
                "        W = np.exp(logits - logits.max(axis=1, keepdims=True))",
                "        W = np.exp(logits)",
            )
        ],
        # only the beta = 800 test overflows (inf / inf = nan); the hidden test's
        # largest logit, beta = 40 with random Q, K, stays far below exp's range.
        "scores": {"q1_attention": 3.0},
    },
    {
        "name": "Euler step without the retraction",
        "replace": [
            (
                "    return Y / np.linalg.norm(Y, axis=1, keepdims=True)",
                "    return Y",
            )
        ],
        "scores": {"q3_euler_step": 0.0},
    },
    {
        "name": "derivation of d|x|^2/dt with y instead of P_x y",
        "replace": [
            (
                "norm_rate = sp.factor(sp.expand(2 * x.dot(project_sym(x, y))))",
                "norm_rate = sp.factor(sp.expand(2 * x.dot(y)))",
            )
        ],
        # the two-token part (b) keeps its 2 points.
        "scores": {"q4_derive": 2.0},
    },
    {
        "name": "Euler step that returns its input",
        "replace": [
            (
                "    Y = X + h * velocity(X, beta, Q=Q, K=K, V=V, "
                "normalization=normalization)\n"
                "    return Y / np.linalg.norm(Y, axis=1, keepdims=True)",
                "    return X",
            )
        ],
        # unit rows, the right shape: the first public test also asks that X moves
        "scores": {"q3_euler_step": 0.0},
    },
    {
        "name": "d|x|^2/dt given as zero",
        "replace": [
            (
                "norm_rate = sp.factor(sp.expand(2 * x.dot(project_sym(x, y))))",
                "norm_rate = sp.Integer(0)",
            )
        ],
        # zero on the sphere, as the right answer; the public test also evaluates it
        # at |x| = 2, where it must not vanish. Part (b) keeps its 2 points.
        "scores": {"q4_derive": 2.0},
    },
    {
        "name": "merging time reported as a step index instead of a time",
        "replace": [
            (
                "t_merge = float(times[np.argmax(counts[1.0] == 1)])",
                "t_merge = float(np.argmax(counts[1.0] == 1))",
            )
        ],
        # the cluster counts are right (1 hidden point); 58.0 is not an output time.
        "scores": {"q5_clusters": 1.0},
    },
]

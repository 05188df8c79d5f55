"""Draw book/figures/readme.png: tokens on S^2 under SA at four times.

Run from the repository root: ``python book/figures/readme_figure.py``.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from attnlib import Model, cluster_count, sample_sphere, simulate  # noqa: E402

times = np.array([0.0, 4.0, 6.0, 12.0])
traj = simulate(Model(beta=2.0), sample_sphere(32, 3, rng=0), times=times, dt=0.05)
u, v = np.mgrid[0 : 2 * np.pi : 40j, 0 : np.pi : 20j]
c = traj.final.mean(axis=0)
elev = np.degrees(np.arcsin(c[2] / np.linalg.norm(c))) - 25
azim = np.degrees(np.arctan2(c[1], c[0]))
fig = plt.figure(figsize=(12, 3.4))
for k, (t, X) in enumerate(zip(times, traj.states)):
    ax = fig.add_subplot(1, 4, k + 1, projection="3d")
    ax.plot_wireframe(
        np.cos(u) * np.sin(v),
        np.sin(u) * np.sin(v),
        np.cos(v),
        color="0.85",
        linewidth=0.4,
    )
    ax.scatter(*X.T, s=28, c="C3", depthshade=False)
    ax.set_title(f"t = {t:g}: {cluster_count(X)} cluster(s)")
    ax.view_init(elev=elev, azim=azim)
    ax.set_box_aspect((1, 1, 1), zoom=1.3)
    ax.set_axis_off()
fig.suptitle(r"SA dynamics on $S^2$, $n = 32$, $\beta = 2$")
fig.tight_layout()
fig.savefig(Path(__file__).with_name("readme.png"), dpi=80)

r"""Symbolic derivations (sympy) behind the modelling chapter.

Each function returns sympy expressions that the book renders as LaTeX and that
the tests compare with the numerical code of :mod:`attnlib`. sympy is imported
here only, never by :mod:`attnlib` itself, so the numerical core imports fast.

* :func:`norm_rate` -- :math:`\frac{d}{dt}|x|^2` under :math:`\dot x = P_x y`;
* :func:`energy_gradient_identity` -- the spherical gradient of
  :math:`E_\beta` equals :math:`\frac1n` times the USA velocity;
* :func:`two_particle_angle` -- the angle between two particles obeys a scalar ODE;
* :func:`gram_velocity` -- the Gram equation :math:`\dot G = AG + (AG)^\top - CG - GC`
  applied to a symbolic matrix (the numerical form is :func:`attnlib.gram_field`).

References
----------
Geshkovski, Letrouit, Polyanskiy, Rigollet, *A mathematical perspective on
Transformers* (arXiv:2312.10794), Sections 2 and 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._deprecation import warn_moved

try:
    import sympy as sp
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("attnlib.symbolic needs sympy: pip install sympy") from exc

from ._validation import NORMALIZATIONS, check_choice, check_int

__all__ = [
    "Derivation",
    "norm_rate",
    "energy_gradient_identity",
    "two_particle_angle",
    "gram_velocity",
]


@dataclass(frozen=True)
class Derivation:
    """Result of the derivations of this module: named sympy objects.

    Attributes
    ----------
    expressions : mapping str -> sympy object
        The symbols and expressions of the derivation (listed in each function's
        Returns section), also read as attributes: ``r.rate`` is
        ``r.expressions["rate"]``.
    """

    expressions: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        expressions = self.__dict__.get("expressions") or {}
        if name in expressions:
            return expressions[name]
        raise AttributeError(
            f"this derivation has no {name!r} (it has: {', '.join(expressions)})"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__["expressions"]))


def _project(x: sp.Matrix, y: sp.Matrix) -> sp.Matrix:
    """The tangent projection :math:`P_x y = y - \\langle x, y\\rangle x`."""
    return y - (x.dot(y)) * x


def norm_rate(d: int = 3) -> Derivation:
    r"""Rate of change of :math:`|x|^2` under the projected dynamics
    :math:`\dot x = P_x y`.

    .. math::

        \frac{d}{dt}|x|^2 = 2\langle x, y - \langle x,y\rangle x\rangle
        = 2\langle x, y\rangle\,(1 - |x|^2),

    which vanishes on the sphere for every ``y``: the projected attention dynamics
    keeps each token on :math:`S^{d-1}` whatever the attention output is.

    Parameters
    ----------
    d : int
        Ambient dimension (``>= 1``).

    Returns
    -------
    Derivation
        With the expressions (read as attributes):

        * ``x``, ``y`` (sympy.Matrix, shape (d, 1)): The position and the unprojected
          velocity (symbols :math:`x_k, y_k`).
        * ``rate`` (sympy.Expr): :math:`\frac{d}{dt}|x|^2 = 2\langle x, P_x y\rangle`,
          factored.
        * ``on_sphere`` (sympy.Expr): ``rate`` with :math:`|x|^2 = 1` substituted (it is
          0).

    Examples
    --------
    >>> r = norm_rate(2)
    >>> r.on_sphere
    0
    """
    d = check_int(d, "d", low=1)
    x = sp.Matrix(sp.symbols(f"x_1:{d + 1}", real=True))
    y = sp.Matrix(sp.symbols(f"y_1:{d + 1}", real=True))
    rate = sp.factor(sp.expand(2 * x.dot(_project(x, y))))
    # remainder of the polynomial division by |x|^2 - 1: zero iff the rate
    # vanishes wherever |x| = 1
    sphere = sum(xi**2 for xi in x) - 1
    on = sp.reduced(sp.expand(rate), [sphere], *x, *y)[1]
    return Derivation(dict(x=x, y=y, rate=rate, on_sphere=on))


def energy_gradient_identity(n: int = 3, d: int = 3) -> Derivation:
    r"""The spherical gradient of the particle energy is ``1/n`` times the USA field.

    With :math:`E_\beta(X) = \frac{1}{2\beta n^2}
    \sum_{i,j} e^{\beta\langle x_i,x_j\rangle}`,

    .. math::

        \nabla_{x_i} E_\beta = \frac{1}{n^2}\sum_j e^{\beta\langle x_i,x_j\rangle} x_j,
        \qquad
        P_{x_i}\nabla_{x_i} E_\beta = \frac1n\,
        P_{x_i}\Big(\frac1n\sum_j e^{\beta\langle x_i,x_j\rangle} x_j\Big),

    so USA is :math:`\dot X = n\,\nabla E_\beta` ([GLPR] Section 3.3).

    Parameters
    ----------
    n, d : int
        Number of particles and dimension of the explicit computation (small: the
        expressions grow like ``n^2 d``).

    Returns
    -------
    Derivation
        With the expressions (read as attributes):

        * ``beta`` (sympy.Symbol)
        * ``X`` (sympy.Matrix, shape (n, d)): Particle coordinates :math:`x_{i,k}`.
        * ``energy`` (sympy.Expr): :math:`E_\beta(X) = \frac{1}{2\beta n^2} \sum_{i,j}
          e^{\beta\langle x_i,x_j\rangle}`.
        * ``euclidean_gradient`` (sympy.Matrix, shape (n, d)): :math:`\partial E_\beta /
          \partial x_{i,k}`.
        * ``spherical_gradient`` (sympy.Matrix, shape (n, d)): Row ``i`` projected on
          :math:`T_{x_i}S^{d-1}`.
        * ``usa_velocity`` (sympy.Matrix, shape (n, d)):
          :math:`P_{x_i}\big(\frac1n\sum_j e^{\beta\langle x_i,x_j\rangle} x_j\big)`.
        * ``difference`` (sympy.Matrix, shape (n, d)): ``spherical_gradient -
          usa_velocity / n``, simplified (all zeros).

    Examples
    --------
    >>> r = energy_gradient_identity(2, 2)
    >>> r.difference.is_zero_matrix
    True
    """
    n = check_int(n, "n", low=1)
    d = check_int(d, "d", low=1)
    beta = sp.Symbol(r"\beta", positive=True)
    X = sp.Matrix(n, d, lambda i, k: sp.Symbol(f"x_{{{i + 1},{k + 1}}}", real=True))
    rows = [X.row(i).T for i in range(n)]
    E = sum(sp.exp(beta * rows[i].dot(rows[j])) for i in range(n) for j in range(n)) / (
        2 * beta * n**2
    )
    G = sp.Matrix(n, d, lambda i, k: sp.simplify(sp.diff(E, X[i, k])))
    S = sp.Matrix.vstack(*[_project(rows[i], G.row(i).T).T for i in range(n)])
    U = sp.Matrix.vstack(
        *[
            _project(
                rows[i],
                sum(
                    (sp.exp(beta * rows[i].dot(rows[j])) * rows[j] for j in range(n)),
                    sp.zeros(d, 1),
                )
                / n,
            ).T
            for i in range(n)
        ]
    )
    diff = (S - U / n).applyfunc(lambda e: sp.simplify(sp.expand(e)))
    return Derivation(
        dict(
            beta=beta,
            X=X,
            energy=E,
            euclidean_gradient=G,
            spherical_gradient=S,
            usa_velocity=U,
            difference=diff,
        )
    )


def two_particle_angle(normalization: str = "sa") -> Derivation:
    r"""The ODE of the angle :math:`\theta` between two particles (any :math:`d \ge 2`).

    The two particles span a plane that the dynamics preserves, so one may take
    :math:`x_1 = (1, 0)`, :math:`x_2 = (\cos\theta, \sin\theta)`. The derivation
    computes both velocities from the model, then
    :math:`\frac{d}{dt}\cos\theta = \langle \dot x_1, x_2\rangle + \langle x_1,
    \dot x_2\rangle`, which gives

    .. math::

        \text{SA: } \dot\theta = -\frac{2\sin\theta}{1 + e^{\beta(1-\cos\theta)}},
        \qquad
        \text{USA: } \dot\theta = -\sin\theta\, e^{\beta\cos\theta}.

    Parameters
    ----------
    normalization : {"sa", "usa"}

    Returns
    -------
    Derivation
        With the expressions (read as attributes):

        * ``beta``, ``theta`` (sympy.Symbol)
        * ``cos_rate`` (sympy.Expr): :math:`\frac{d}{dt}\langle x_1, x_2\rangle` as a
          function of :math:`\theta` (the angle between the particles).
        * ``theta_rate`` (sympy.Expr): :math:`\dot\theta`, simplified.

    Examples
    --------
    >>> r = two_particle_angle("usa")
    >>> r.theta_rate
    -exp(\beta*cos(\theta))*sin(\theta)
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    beta = sp.Symbol(r"\beta", positive=True)
    th = sp.Symbol(r"\theta", positive=True)
    x = [sp.Matrix([1, 0]), sp.Matrix([sp.cos(th), sp.sin(th)])]
    vel = []
    for i in range(2):
        w = [sp.exp(beta * x[i].dot(x[j])) for j in range(2)]
        Z = sum(w) if normalization == "sa" else 2
        y = (w[0] * x[0] + w[1] * x[1]) / Z
        vel.append(_project(x[i], y).applyfunc(sp.simplify))
    c_rate = sp.simplify(vel[0].dot(x[1]) + x[0].dot(vel[1]))
    theta_rate = sp.simplify(-c_rate / sp.sin(th))
    if normalization == "sa":
        # divide numerator and denominator by exp(beta cos theta)
        num, den = sp.fraction(sp.together(theta_rate))
        f = sp.exp(beta * sp.cos(th))
        theta_rate = sp.simplify(sp.expand(num / f)) / sp.simplify(sp.expand(den / f))
    return Derivation(dict(beta=beta, theta=th, cos_rate=c_rate, theta_rate=theta_rate))


def gram_velocity(G: sp.Matrix, *, beta: Any, normalization: str = "sa") -> sp.Matrix:
    r"""The right-hand side of the Gram equation on a symbolic matrix.

    For tokens on the sphere moving by attention with :math:`Q = K = V = I`, the
    Gram matrix obeys :math:`\dot G = AG + (AG)^\top - CG - GC`, with :math:`A` the
    attention matrix of the logits :math:`\beta G` (rows divided by their sums for
    SA, by ``n`` for USA) and :math:`C = \operatorname{diag}((AG)_{ii})`. The same
    formula as :func:`attnlib.gram_field`, entry by entry in sympy.

    Parameters
    ----------
    G : sympy.Matrix, shape (n, n)
        A symmetric matrix of sympy expressions.
    beta : sympy expression or number
    normalization : {"sa", "usa"}

    Returns
    -------
    sympy.Matrix, shape (n, n)

    Examples
    --------
    >>> beta, gamma = sp.symbols("beta gamma")
    >>> G = sp.Matrix([[1, gamma], [gamma, 1]])
    >>> sp.factor(gram_velocity(G, beta=beta, normalization="usa")[0, 1])
    -(gamma - 1)*(gamma + 1)*exp(beta*gamma)
    """
    check_choice(normalization, "normalization", NORMALIZATIONS)
    if not isinstance(G, sp.MatrixBase) or G.rows != G.cols or G.rows == 0:
        raise TypeError(f"G must be a square sympy Matrix, got {type(G).__name__}")
    if G != G.T:
        raise ValueError("G must be symmetric (a Gram matrix), got G != G^T")
    beta = sp.sympify(beta)
    m = G.rows
    W = G.applyfunc(lambda g: sp.exp(beta * g))
    if normalization == "sa":
        A = sp.diag(*[1 / sum(W.row(i)) for i in range(m)]) * W
    else:
        A = W / m
    AG = A * G
    C = sp.diag(*[AG[i, i] for i in range(m)])
    return AG + AG.T - C * G - G * C


def __getattr__(name: str) -> Any:
    # the three derivations return one Derivation
    if name in ("NormRate", "EnergyGradientIdentity", "TwoParticleAngle"):
        warn_moved(
            f"attnlib.symbolic.{name}",
            "attnlib.symbolic.Derivation (what the derivations return)",
        )
        return Derivation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

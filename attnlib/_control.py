"""Step-size rules of the explicit schemes, below the models and the driver.

:func:`glpr_usa_step` is the stable step of the [GLPR] code for USA; the models
return it from their ``stable_step`` (:class:`attnlib.integrate.Dynamics`), and
``simulate(..., step_rule="glpr")`` caps its step with it.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_real

__all__ = ["glpr_usa_step"]


def glpr_usa_step(beta: float) -> float:
    r"""Stable USA step of the [GLPR] code.

    .. math:: \eta = 0.1 / \max(\sqrt\beta\, e^{\beta-1/2}, 1)

    Evaluated in the log domain. It is the step of USA (whose speed grows like
    :math:`e^\beta`); SA does not need it.

    Raises
    ------
    ValueError
        If :math:`\eta` underflows to zero in float64 (``beta`` above about 740).

    Examples
    --------
    >>> glpr_usa_step(0.5), f"{glpr_usa_step(50.0):.3e}"
    (0.1, '4.497e-24')
    """
    beta = check_real(beta, "beta", low=0.0)
    log_rate = 0.5 * np.log(beta) + beta - 0.5 if beta > 0 else -np.inf
    eta = float(0.1 * np.exp(-max(log_rate, 0.0)))
    if eta == 0.0:
        raise ValueError(
            f"beta={beta:g} is too large for the GLPR USA step: 0.1 e^(-beta) / "
            "sqrt(beta) underflows float64 (beta must be below about 740)"
        )
    return eta

"""Ratings from pairwise finishing comparisons: a Bradley-Terry fit on the Elo scale.

Every finished game gives one comparison for each pair of agents at its table: the agent with
the higher payoff (under ``cards`` scoring: fewer cards left; the game's winner beats everyone)
wins it; equal payoffs count half a win each way. ``wins[a, b]`` is how many comparisons ``a``
won against ``b``.

The Bradley-Terry model says ``a`` beats ``b`` with probability
``1 / (1 + exp(-(theta_a - theta_b)))``. ``fit_bradley_terry`` finds the maximum of its log
likelihood plus a weak Gaussian prior ``-prior/2 * sum(theta**2)`` (it keeps an unbeaten or
never-seen agent finite and centres the strengths on 0) by Newton's method. Ratings are
reported on the Elo scale, ``400 / ln(10) * theta``: a 400-point gap is 10:1 odds, 0 is the
field's average.

Uncertainty: ``rate_deals`` resamples the *deals* with replacement (comparisons within a deal
share its cards and are not independent, so resampling single comparisons, or the Hessian of
the fit, would understate the error) and reports each rating's bootstrap standard deviation.
``fit_bradley_terry(..., return_se=True)`` also gives the Hessian-based standard error, which
is right only for independent comparisons.

>>> import numpy as np
>>> wins = np.array([[0, 75], [25, 0]])  # a beat b 75 times out of 100
>>> theta = fit_bradley_terry(wins, prior=0.0)
>>> round(float(theta[0] - theta[1]), 3)  # log(75 / 25)
1.099
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per unit of theta


def fit_bradley_terry(
    wins: np.ndarray, prior: float = 1e-3, iters: int = 100, tol: float = 1e-10, return_se: bool = False
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry strengths ``theta`` (natural-log scale, mean 0) from a ``(K, K)`` matrix of
    comparison wins; with ``return_se`` also their Hessian-based standard errors.

    ``prior`` is the precision of a Gaussian prior on each ``theta`` (0 = plain maximum
    likelihood, which diverges for an agent that never loses or never wins)."""
    w = np.asarray(wins, dtype=np.float64)
    k = w.shape[0]
    if w.shape != (k, k):
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    w = w * (1.0 - np.eye(k))
    n = w + w.T  # comparisons between each pair
    won = w.sum(axis=1)
    theta = np.zeros(k)
    hess = -np.eye(k)
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j]: i beats j
        grad = won - (n * p).sum(axis=1) - prior * theta
        c = n * p * (1.0 - p)
        hess = c - np.diag(c.sum(axis=1)) - prior * np.eye(k)
        if prior <= 0:
            # Without a prior only differences are identified: pin the mean at 0.
            hess = hess - np.ones((k, k)) / k
        step = np.linalg.solve(hess, grad)
        theta = theta - step
        if prior <= 0:
            theta -= theta.mean()
        if np.abs(step).max() < tol:
            break
    theta -= theta.mean()
    if not return_se:
        return theta
    centre = np.eye(k) - 1.0 / k  # errors of theta - mean(theta): the mean is pinned, not estimated
    cov = centre @ np.linalg.pinv(-hess) @ centre
    return theta, np.sqrt(np.clip(np.diag(cov), 0.0, None))


@dataclass
class Ratings:
    """Elo-scale ratings (mean 0) with bootstrap standard errors."""

    rating: np.ndarray  # (K,) Elo points
    se: np.ndarray  # (K,) bootstrap standard deviation of each rating
    comparisons: np.ndarray  # (K,) comparisons each agent took part in
    method: str


def rate_deals(pairs: np.ndarray, bootstrap: int = 200, seed: int = 0, prior: float = 1e-3) -> Ratings:
    """Fit ratings to per-deal comparison counts ``pairs`` ``(D, K, K)`` (``pairs[d, a, b]``:
    comparisons ``a`` won against ``b`` in deal ``d``), with standard errors from ``bootstrap``
    resamples of the deals (0: Hessian-based errors instead)."""
    pairs = np.asarray(pairs, dtype=np.float64)
    d, k, _ = pairs.shape
    total = pairs.sum(axis=0)
    theta, hessian_se = fit_bradley_terry(total, prior=prior, return_se=True)
    comparisons = (total + total.T).sum(axis=1)
    if bootstrap <= 0 or d < 2:
        return Ratings(theta * ELO_SCALE, hessian_se * ELO_SCALE, comparisons, "Bradley-Terry, Hessian SE")
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(d, np.full(d, 1.0 / d), size=bootstrap).astype(np.float64)  # (B, D)
    resampled = (weights @ pairs.reshape(d, k * k)).reshape(bootstrap, k, k)
    thetas = np.stack([fit_bradley_terry(m, prior=prior) for m in resampled])
    se = thetas.std(axis=0, ddof=1) * ELO_SCALE
    return Ratings(theta * ELO_SCALE, se, comparisons, f"Bradley-Terry, bootstrap over deals ({bootstrap})")

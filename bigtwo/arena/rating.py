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

**Many agents.** A tournament's deals each seat a table of a few agents, so the comparisons are
sparse: ``rate_tables`` takes them per deal and table position (``(D, P, P)``, with the
``(D, P)`` tables) and keeps only the pairs that met, so memory follows the games played, not
the square of the number of agents. Up to ``MAX_DENSE_AGENTS`` agents it fits the dense
``(K, K)`` matrix as above (the same numbers as ``rate_deals``); with more it fits the same model
by Newton's method on the pairs that met (``fit_bradley_terry_pairs``, conjugate gradients for
each step, a prior > 0), and Hessian errors (``bootstrap=0``) are refused.

>>> import numpy as np
>>> wins = np.array([[0, 75], [25, 0]])  # a beat b 75 times out of 100
>>> theta = fit_bradley_terry(wins, prior=0.0)
>>> round(float(theta[0] - theta[1]), 3)  # log(75 / 25)
1.099
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per unit of theta


@overload
def fit_bradley_terry(
    wins: np.ndarray, prior: float = ..., iters: int = ..., tol: float = ..., return_se: Literal[False] = ...
) -> np.ndarray: ...
@overload
def fit_bradley_terry(
    wins: np.ndarray, prior: float = ..., iters: int = ..., tol: float = ..., *, return_se: Literal[True]
) -> tuple[np.ndarray, np.ndarray]: ...
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


MAX_DENSE_AGENTS = 256  # more agents than this: the pairs that met, not a (K, K) matrix


def _pairs_of_tables(tables: np.ndarray, pairs_at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(deal, a, b, wins)`` per deal and ordered pair of table positions ``(i, j)``: the entries
    ``a`` at ``i`` and ``b`` at ``j``, and the comparisons ``a`` won against ``b`` there."""
    d, p = tables.shape
    i, j = np.nonzero(~np.eye(p, dtype=bool))
    deal = np.repeat(np.arange(d), i.size)
    return deal, tables[:, i].reshape(-1), tables[:, j].reshape(-1), pairs_at[:, i, j].reshape(-1)


def _pcg(
    matvec: Callable[[np.ndarray], np.ndarray],
    rhs: np.ndarray,
    diag: np.ndarray,
    rtol: float = 1e-10,
    maxiter: int = 10_000,
) -> np.ndarray:
    """Solve ``A x = rhs`` for a symmetric positive definite ``A`` given as ``matvec`` by
    conjugate gradients preconditioned with ``A``'s diagonal."""
    x = np.zeros_like(rhs)
    r = rhs.copy()
    limit = rtol * max(float(np.linalg.norm(rhs)), 1e-300)
    z = r / diag
    direction = z.copy()
    rz = float(r @ z)
    for _ in range(maxiter):
        if float(np.linalg.norm(r)) <= limit:
            break
        a_dir = matvec(direction)
        alpha = rz / float(direction @ a_dir)
        x += alpha * direction
        r -= alpha * a_dir
        z = r / diag
        rz_next = float(r @ z)
        direction = z + (rz_next / rz) * direction
        rz = rz_next
    return x


def fit_bradley_terry_pairs(
    winner: np.ndarray,
    loser: np.ndarray,
    wins: np.ndarray,
    k: int,
    prior: float = 1e-3,
    iters: int = 100,
    tol: float = 1e-10,
) -> np.ndarray:
    """``fit_bradley_terry`` for ``k`` agents from the pairs that met: ``wins[e]`` comparisons
    ``winner[e]`` won against ``loser[e]`` (a pair may appear in both orders). Needs ``prior > 0``.

    >>> theta = fit_bradley_terry_pairs(np.array([0, 1]), np.array([1, 0]), np.array([75.0, 25.0]), 3)
    >>> bool(np.allclose(theta, fit_bradley_terry(np.array([[0, 75, 0], [25, 0, 0], [0, 0, 0]]))))
    True
    """
    if not prior > 0:
        raise ValueError(f"fitting the pairs that met needs a prior > 0 (it keeps unseen agents at 0), got {prior}")
    # Agents that met no one keep theta = 0 (their prior alone): solve for the others only.
    met, pairs = np.unique(np.concatenate([winner, loser]).astype(np.int64), return_inverse=True)
    src, dst = pairs[: len(winner)], pairs[len(winner) :]
    w = np.asarray(wins, np.float64)
    out = np.zeros(k)
    out[met] = _fit_pairs(src, dst, w, met.size, prior, iters, tol)
    return out - out.mean()


def _fit_pairs(
    src: np.ndarray, dst: np.ndarray, w: np.ndarray, k: int, prior: float, iters: int, tol: float
) -> np.ndarray:
    """Newton's method for ``fit_bradley_terry_pairs`` on agents ``0..k - 1`` (not centred)."""
    won = np.bincount(src, w, minlength=k)
    theta = np.zeros(k)
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(theta[dst] - theta[src]))  # src beats dst
        # sum over j of (w_ij + w_ji) * p_ij: an edge's w counts for both ends, each at its chance
        expected = np.bincount(src, w * p, minlength=k) + np.bincount(dst, w * (1.0 - p), minlength=k)
        grad = won - expected - prior * theta
        c = w * p * (1.0 - p)
        diag = np.bincount(src, c, minlength=k) + np.bincount(dst, c, minlength=k) + prior

        def matvec(v: np.ndarray, c: np.ndarray = c, diag: np.ndarray = diag) -> np.ndarray:
            return diag * v - np.bincount(src, c * v[dst], minlength=k) - np.bincount(dst, c * v[src], minlength=k)

        step = _pcg(matvec, grad, diag)
        theta = theta + step
        if np.abs(step).max() < tol:
            break
    return theta


def rate_tables(
    tables: np.ndarray, pairs_at: np.ndarray, k: int, bootstrap: int = 200, seed: int = 0, prior: float = 1e-3
) -> Ratings:
    """``rate_deals`` for ``k`` agents from comparisons per deal and table position: ``pairs_at[d,
    i, j]`` comparisons the entry at position ``i`` of deal ``d`` (``tables[d, i]``) won against
    the one at ``j``. Memory follows the deals (see the module docstring)."""
    tables = np.asarray(tables, np.int64)
    pairs_at = np.asarray(pairs_at, np.float64)
    d = tables.shape[0]
    deal, a, b, w = _pairs_of_tables(tables, pairs_at)
    comparisons = np.bincount(a, w, minlength=k) + np.bincount(b, w, minlength=k)
    if k <= MAX_DENSE_AGENTS:
        key = a * k + b

        def fit(weights: np.ndarray) -> np.ndarray:
            return fit_bradley_terry(np.bincount(key, weights, minlength=k * k).reshape(k, k), prior=prior)

        total = np.bincount(key, w, minlength=k * k).reshape(k, k)
        theta, hessian_se = fit_bradley_terry(total, prior=prior, return_se=True)
        if bootstrap <= 0 or d < 2:
            return Ratings(theta * ELO_SCALE, hessian_se * ELO_SCALE, comparisons, "Bradley-Terry, Hessian SE")
    else:
        if bootstrap <= 0:
            raise ValueError(
                f"Hessian rating errors (bootstrap 0) need a {k} x {k} matrix: at most {MAX_DENSE_AGENTS} agents; "
                "use bootstrap > 0"
            )
        met, inverse = np.unique(a * k + b, return_inverse=True)
        winner, loser = met // k, met % k

        def fit(weights: np.ndarray) -> np.ndarray:
            return fit_bradley_terry_pairs(winner, loser, np.bincount(inverse, weights, minlength=met.size), k, prior)

        theta = fit(w)
        if d < 2:
            return Ratings(theta * ELO_SCALE, np.full(k, np.nan), comparisons, "Bradley-Terry, one deal: no SE")
    rng = np.random.default_rng(seed)
    resample = rng.multinomial(d, np.full(d, 1.0 / d), size=bootstrap).astype(np.float64)  # (B, D)
    thetas = np.stack([fit(resample[r, deal] * w) for r in range(bootstrap)])
    se = thetas.std(axis=0, ddof=1) * ELO_SCALE
    return Ratings(theta * ELO_SCALE, se, comparisons, f"Bradley-Terry, bootstrap over deals ({bootstrap})")

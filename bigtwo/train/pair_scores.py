"""The scorer's pair layer in one pass: every legal play's score without an ``(M, pair)`` tensor.

``ActionScorer`` scores each legal (state, play) pair (``bigtwo.train.networks``)::

    h     = relu(S[row] + A[play] + advised * w_flag)      S = state_proj(state)   (B, pair)
    score = w . h + bias                                   A = play features' projection

Written as torch ops, that makes and reads back an ``(M, pair)`` tensor (M = the legal plays of
a batch, ~10k for a minibatch of 2,048 decisions) about ten times a step (two gathers, the add,
the relu, the score, and as many again backwards), and at ~2.7 MB a pass those passes, not the
arithmetic, were half of a PPO minibatch's time on this project's CPU. ``PairScores`` does the
same in compiled loops that hold ``h`` in registers: one pass over the pairs forwards, one
backwards (``h`` recomputed), and the projection ``A`` is taken once per distinct play of the
batch (a minibatch of 2,048 decisions holds ~1,000 distinct plays among its ~10,000 legal ones:
``distinct_plays``), not once per pair.

Where it runs: on the CPU, for float32 passes of a scorer with one pair layer (every shipped
config); other devices, precisions and deeper scorers keep the torch ops. The two give the same
scores and gradients up to float32 rounding (the sums are taken in another order): a test pins
both against each other and against finite differences (``torch.autograd.gradcheck``).

The kernels release the GIL (``overlap`` runs an update beside the rollout's own passes).

The padded layout is the network's own: ``legal`` ``(B, L)`` with ``counts`` per row; slots past
a row's count score ``-inf`` and get no gradient.

>>> import numpy as np, torch
>>> S = torch.zeros(2, 3, requires_grad=True); A = torch.ones(2, 3, requires_grad=True)
>>> col = torch.tensor([[0, 1], [1, 0]], dtype=torch.int32); counts = torch.tensor([2, 1])
>>> w = torch.ones(3, requires_grad=True); b = torch.zeros(1, requires_grad=True)
>>> flag = torch.zeros(3, requires_grad=True); advised = torch.tensor([-1, 0])
>>> PairScores.apply(S, A, flag, w, b, col, counts, advised)
tensor([[3., 3.],
        [3., -inf]], grad_fn=<PairScoresBackward>)
"""

from __future__ import annotations

import numpy as np
import torch

from bigtwo.env.engine.jit import njit


@njit(nogil=True)
def distinct_plays(legal, counts, slot_of):
    """The distinct play ids among the first ``counts[b]`` entries of each row of ``legal``
    (in order of first appearance) and, per slot, the index of its play among them (``-1`` past
    the row's count); an id outside ``0 .. len(slot_of) - 1`` raises ``ValueError``. ``slot_of``
    (int32, one entry per action id, all ``-1``) is scratch and is left all ``-1``."""
    rows, width = legal.shape
    actions = slot_of.shape[0]
    col = np.full((rows, width), -1, dtype=np.int32)
    order = np.empty(rows * width, dtype=np.int64)
    u = 0
    for b in range(rows):
        for s in range(counts[b]):
            a = legal[b, s]
            if a < 0 or a >= actions:
                for i in range(u):  # leave the scratch clean
                    slot_of[order[i]] = -1
                raise ValueError("a legal play id is outside the action table")
            k = slot_of[a]
            if k < 0:
                k = u
                slot_of[a] = u
                order[u] = a
                u += 1
            col[b, s] = k
    plays = order[:u].copy()
    for i in range(u):
        slot_of[plays[i]] = -1
    return plays, col


@njit(nogil=True, fastmath=True)
def _forward(S, A, flag, w, bias, col, counts, advised, out):
    rows, width = col.shape
    p = S.shape[1]
    for b in range(rows):
        n = counts[b]
        for s in range(width):
            if s >= n:
                out[b, s] = -np.inf
                continue
            k = col[b, s]
            f = s == advised[b]
            acc = bias[0]
            for j in range(p):
                h = S[b, j] + A[k, j]
                if f:
                    h += flag[j]
                if h > 0:
                    acc += h * w[j]
            out[b, s] = acc


@njit(nogil=True, fastmath=True)
def _backward(g, S, A, flag, w, col, counts, advised, gS, gA, gflag, gw):
    rows = col.shape[0]
    p = S.shape[1]
    gb = 0.0
    for b in range(rows):
        for s in range(counts[b]):
            gs = g[b, s]
            if gs == 0.0:
                continue
            gb += gs
            k = col[b, s]
            f = s == advised[b]
            for j in range(p):
                h = S[b, j] + A[k, j]
                if f:
                    h += flag[j]
                if h > 0:
                    gw[j] += gs * h
                    gh = gs * w[j]
                    gS[b, j] += gh
                    gA[k, j] += gh
                    if f:
                        gflag[j] += gh
    return gb


@njit(nogil=True, fastmath=True)
def _forward_after(S, A, V, flag, w, bias, col, counts, advised, out):
    rows, width = col.shape
    p = S.shape[1]
    m = 0
    for b in range(rows):
        n = counts[b]
        for s in range(width):
            if s >= n:
                out[b, s] = -np.inf
                continue
            k = col[b, s]
            f = s == advised[b]
            acc = bias[0]
            for j in range(p):
                h = S[b, j] + A[k, j] + V[m, j]
                if f:
                    h += flag[j]
                if h > 0:
                    acc += h * w[j]
            out[b, s] = acc
            m += 1


@njit(nogil=True, fastmath=True)
def hand_after_inputs(hand, cards, col, counts, out):
    """The hidden layer of ``hand_after``'s network for every legal slot into ``out`` ``(M, q)``, in
    the slots' order (row by row): ``relu(hand[b] - cards[col[b, s]])``, where ``hand`` ``(B, q)`` is
    the first layer on each row's hand (bias included) and ``cards`` ``(U, q)`` on each distinct
    play's cards (no bias). The layer is linear, so ``W (hand - cards) + b`` splits into a pass per
    row and one per distinct play instead of one per pair."""
    rows = col.shape[0]
    q = hand.shape[1]
    m = 0
    for b in range(rows):
        for s in range(counts[b]):
            k = col[b, s]
            for j in range(q):
                v = hand[b, j] - cards[k, j]
                out[m, j] = v if v > 0 else 0.0
            m += 1


def score_pairs(S, A, flag, w, bias, col, counts, advised, after=None) -> np.ndarray:
    """``PairScores``' forward on NumPy arrays, without autograd (playing): the ``(B, L)`` scores
    from float32 ``S``, ``A``, ``flag``, ``w``, ``bias`` ``(1,)``, int32 ``col`` and int64 ``counts``
    and ``advised``, all C-contiguous; the same kernel, so the same numbers. ``after``: a network
    with ``hand_after``'s input to each pair's layer, ``(M, P)`` in the slots' order (row by row)."""
    out = np.empty(col.shape, dtype=S.dtype)
    if after is None:
        _forward(S, A, flag, w, bias, col, counts, advised, out)
    else:
        _forward_after(S, A, after, flag, w, bias, col, counts, advised, out)
    return out


class PairScores(torch.autograd.Function):
    """``(B, L)`` scores of the pair layer (see the module docstring) from ``S`` ``(B, P)``, ``A``
    ``(U, P)`` (one row per distinct play), the advice input's weights ``flag`` ``(P,)``, the
    score layer's ``w`` ``(P,)`` and ``bias`` ``(1,)``, ``col`` ``(B, L)`` int32 (the row of ``A`` of
    each slot: ``distinct_plays``), ``counts`` ``(B,)`` and ``advised`` ``(B,)`` (the advised slot per
    row, ``-1`` for none). CPU tensors of one float dtype."""

    @staticmethod
    def forward(ctx, S, A, flag, w, bias, col, counts, advised):
        S, A, flag, w = (t.detach().contiguous() for t in (S, A, flag, w))
        col, counts, advised = col.contiguous(), counts.contiguous(), advised.contiguous()
        out = torch.from_numpy(score_pairs(
            S.numpy(), A.numpy(), flag.numpy(), w.numpy(), bias.detach().to(S.dtype).reshape(1).numpy(),
            col.numpy(), counts.numpy(), advised.numpy(),
        ))  # fmt: skip
        ctx.save_for_backward(S, A, flag, w, col, counts, advised)
        ctx.bias_shape = bias.shape
        return out

    @staticmethod
    def backward(ctx, g):
        S, A, flag, w, col, counts, advised = ctx.saved_tensors
        gS, gA, gflag, gw = (torch.zeros_like(t) for t in (S, A, flag, w))
        gb = _backward(
            g.contiguous().numpy(), S.numpy(), A.numpy(), flag.numpy(), w.numpy(),
            col.numpy(), counts.numpy(), advised.numpy(), gS.numpy(), gA.numpy(), gflag.numpy(), gw.numpy(),
        )  # fmt: skip
        gbias = torch.full(ctx.bias_shape, gb, dtype=S.dtype)
        return gS, gA, gflag, gw, gbias, None, None, None

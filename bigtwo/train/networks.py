"""Networks that score only the legal plays: a state encoder and a (state, action) scorer.

The action space has ~20,000 plays (19,895 in ``taiwan``) but a seat has few legal ones (3.4 on
average in random ``taiwan`` play, 128 at most in 300 x 1024 decisions). So, as in DouZero, no
network here has a 20k-wide output. A play is described by features from the action table
(``action_features``: its cards one-hot (52), its kind one-hot (10), its size / 6 and its strength
within its size, 0..1); the network scores each legal (state, play) pair:

    s       = StateEncoder(obs)                         once per decision   (B, hidden)
    h       = relu(W_s s[row] + W_a features[play])     once per legal play (M, pair)
    h       = relu(W h) ... (pair_layers - 1 times)
    score   = w . h                                     -> logits (PPO) or Q values (DMC)
    value   = v . s                                     (PPO's critic)

With ``hand_after`` (``TrainConfig.hand_after``) the pair layer also reads the hand each play leaves,
through a small network of its own (a learned judge of what a play keeps back, shared by every play):

    h       = relu(W_s s[row] + W_a features[play] + G(hand - cards(play)))    G: 52 -> hand_after -> pair

With ``critic_size`` (``TrainConfig.critic: global``) the value comes instead from a critic network of
its own over the privileged global state (every hand; ``bigtwo.env.engine.state``), as in PerfectDou:

    value   = Critic(global_state)                      (training only: the policy never reads it)

``forward`` then takes the global state as ``state``; without it (playing) the value is NaN.

The legal plays of a batch are flattened (``M = sum(legal_counts)``) so the cost follows the
number of legal plays, not the padded width; the scores are then put back into a padded
``(B, L)`` array whose padding holds ``-inf``, and only then does anything take a softmax.

Measured on this project's 2-core CPU (torch 2.13, 1 thread, median of 21): a batch of 1024 real
``taiwan`` decisions from random play (mid-game, 3,135 legal plays, padded width 31);
``python -m benchmarks.dense_head`` (run from the repository) re-measures:

| encoder, scorer | head | forward (ms) | forward + backward (ms) | parameters |
|---|---|---|---|---|
| 128 x 2, 64 (the default) | legal plays only (this module) | 2.9 | 6.8 | 0.08 M |
| 128 x 2 | dense ~19,900-wide head, masked | 185 | 663 | 2.6 M |
| 256 x 2, 128 | legal plays only (this module) | 6.9 | 16.1 | 0.21 M |
| 256 x 2 | dense ~19,900-wide head, masked | 285 | 877 | 5.3 M |

So the dense head alone would cost ~60x the whole legal-only network per batch, and training
at the default's ~30k environment steps/s would be out of reach.

>>> import numpy as np, torch
>>> from bigtwo.env import load_variant
>>> net = ActionScorer(402, action_features(load_variant("taiwan")))
>>> legal = torch.tensor([[0, 5, 9], [7, 0, 0]]); counts = torch.tensor([3, 1])
>>> scores, value = net(torch.zeros(2, 402), legal, counts)
>>> scores.shape, bool(torch.isinf(scores[1, 1:]).all()), value.shape
(torch.Size([2, 3]), True, torch.Size([2]))
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
from torch import nn

from bigtwo.env.engine.observation import NUM_KINDS, part_slices
from bigtwo.env.rules.actions import action_table
from bigtwo.env.rules.variant import Variant
from bigtwo.train.advice import Adviser, make_adviser
from bigtwo.train.config import PRECISIONS
from bigtwo.train.pair_scores import PairScores, distinct_plays, hand_after_inputs, score_pairs

ACTION_FEATURES = 52 + NUM_KINDS + 2
HAND = part_slices(4)["hand"]  # the observer's own hand in the observation (the first 52 slots, any P)


def action_features(variant: Variant) -> np.ndarray:
    """Features of every play of ``variant``'s action table, float32 ``(A, ACTION_FEATURES)``:
    cards one-hot, kind one-hot, size / 6, strength / (largest strength of that size)."""
    t = action_table(variant)
    n = t.size
    out = np.zeros((n, ACTION_FEATURES), np.float32)
    rows, slots = np.nonzero(t.cards >= 0)
    out[rows, t.cards[rows, slots].astype(np.int64)] = 1.0
    out[np.arange(n), 52 + t.kinds.astype(np.int64)] = 1.0
    out[:, 52 + NUM_KINDS] = t.sizes / 6.0
    top = np.zeros(7, np.float64)
    np.maximum.at(top, t.sizes.astype(np.int64), t.strength.astype(np.float64))
    denom = np.maximum(top[t.sizes.astype(np.int64)], 1.0)
    out[:, 53 + NUM_KINDS] = t.strength / denom
    return out


def has_bfloat16(device: torch.device) -> bool:
    """Whether ``device`` runs bfloat16 matmuls natively: a GPU with bf16, or a CPU with AVX-512 BF16
    or AMX (elsewhere torch emulates them, slower than float32)."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu" and hasattr(torch.cpu, "get_capabilities"):
        caps = torch.cpu.get_capabilities()
        return bool(caps.get("avx512_bf16") or caps.get("amx_bf16"))
    return False


@functools.cache
def compute_dtype(precision: str, device_type: str) -> torch.dtype | None:
    """The dtype ``torch.autocast`` runs a network's passes in for ``precision`` (``PRECISIONS``) on a
    device of ``device_type``; ``None``: plain float32, no autocast.

    >>> compute_dtype("float32", "cpu") is None, compute_dtype("bfloat16", "cpu")
    (True, torch.bfloat16)
    """
    if precision == "float32":
        return None
    if precision == "bfloat16":
        return torch.bfloat16
    if precision == "auto":
        return torch.bfloat16 if has_bfloat16(torch.device(device_type)) else None
    raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights, constant bias (CleanRL's initialisation)."""
    nn.init.orthogonal_(layer.weight, std)
    if layer.bias is not None:
        nn.init.constant_(layer.bias, bias)
    return layer


def mlp(in_size: int, hidden_size: int, layers: int) -> nn.Sequential:
    """``layers`` ReLU layers of ``hidden_size`` over ``in_size`` inputs, CleanRL-initialised (a state
    encoder; ``bigtwo.train.belief``'s body)."""
    body: list[nn.Module] = []
    width = in_size
    for _ in range(layers):
        body += [layer_init(nn.Linear(width, hidden_size)), nn.ReLU()]
        width = hidden_size
    return nn.Sequential(*body)


def legal_mask(legal_counts: torch.Tensor, width: int) -> torch.Tensor:
    """``(B, width)`` bool: which padded slots hold a legal play."""
    return torch.arange(width, device=legal_counts.device)[None, :] < legal_counts[:, None]


def gradient_step(optimizer: torch.optim.Optimizer, loss: torch.Tensor, net: nn.Module, max_grad_norm: float) -> None:
    """One optimizer step on ``loss``: zero the gradients, backpropagate, clip their global norm to
    ``max_grad_norm`` (``0``: no clipping), step."""
    optimizer.zero_grad()
    loss.backward()
    if max_grad_norm > 0:
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
    optimizer.step()


def masked_log_softmax(scores: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal slots (scores already hold -inf on padding)."""
    return torch.log_softmax(scores, dim=-1).masked_fill(~valid, 0.0)


class ActionScorer(nn.Module):
    """Scores the legal plays of each decision, plus a state value; see the module docstring.

    ``forward(obs (B, D), legal_ids (B, L) long, legal_counts (B,) long)`` returns ``(scores
    (B, L) with -inf past each row's count, value (B,))``, float32; with ``critic_size`` the value
    reads ``state (B, critic_size)``, the global state (NaN without it). With ``precision`` ``bfloat16``
    (or ``auto`` on a device that has it) the passes run under ``torch.autocast``: the matmuls in
    bfloat16, the weights (and their gradients) float32."""

    features: torch.Tensor  # (actions, ACTION_FEATURES), a buffer: register_buffer sets it in __init__

    def __init__(
        self,
        obs_size: int,
        features: np.ndarray,
        hidden_size: int = 256,
        state_layers: int = 2,
        pair_size: int = 128,
        pair_layers: int = 1,
        score_std: float = 0.01,
        advice: str = "",
        adviser: Adviser | None = None,
        precision: str = "float32",
        critic_size: int = 0,
        hand_places: int = 0,
        hand_after: int = 0,
    ) -> None:
        super().__init__()
        compute_dtype(precision, "cpu")  # refuses an unknown precision now, not at the first pass
        # the arithmetic of the passes (``PRECISIONS``; the trainers set it from their config): not a
        # constructor kwarg that checkpoints keep, so an exported network plays in float32
        self.precision = precision
        self.kwargs: dict[str, Any] = dict(
            obs_size=obs_size,
            hidden_size=hidden_size,
            state_layers=state_layers,
            pair_size=pair_size,
            pair_layers=pair_layers,
            score_std=score_std,
        )
        if advice:
            self.kwargs["advice"] = advice  # only when set: checkpoints without advice keep their kwargs
        if critic_size:
            self.kwargs["critic_size"] = critic_size  # likewise
        if hand_places:
            self.kwargs["hand_places"] = hand_places  # likewise
        if hand_after:
            self.kwargs["hand_after"] = hand_after  # likewise
        self.advice = advice
        self.adviser = adviser  # asked by ``score_arrays`` when no advised slots are given
        self.register_buffer("features", torch.as_tensor(features, dtype=torch.float32), persistent=False)
        self.state_encoder = mlp(obs_size, hidden_size, state_layers)
        self.state_proj = layer_init(nn.Linear(hidden_size, pair_size))
        self.advice_size = 1 if advice else 0  # one input per play: is it the adviser's choice
        self.action_proj = layer_init(nn.Linear(features.shape[1] + self.advice_size, pair_size, bias=False))
        pair: list[nn.Module] = []
        for _ in range(pair_layers - 1):
            pair += [layer_init(nn.Linear(pair_size, pair_size)), nn.ReLU()]
        self.pair = nn.Sequential(*pair)
        # the hand left after each play, through a network of its own (``TrainConfig.hand_after``): a
        # learned judge of what a play leaves, added to the pair layer's input; None without
        self.hand_after = hand_after
        self.after = (
            nn.Sequential(
                layer_init(nn.Linear(52, hand_after)), nn.ReLU(), layer_init(nn.Linear(hand_after, pair_size))
            )
            if hand_after
            else None
        )
        self.score = layer_init(nn.Linear(pair_size, 1), std=score_std)
        self.critic_size = critic_size
        self.value: nn.Module
        if critic_size:  # a critic of its own over the global state (the encoder serves only the policy)
            self.value = nn.Sequential(
                layer_init(nn.Linear(critic_size, hidden_size)),
                nn.ReLU(),
                layer_init(nn.Linear(hidden_size, hidden_size)),
                nn.ReLU(),
                layer_init(nn.Linear(hidden_size, 1), std=1.0),
            )
        else:
            self.value = layer_init(nn.Linear(hidden_size, 1), std=1.0)
        # the auxiliary hands head (``TrainConfig.hands_coef``): for each card, a score per other place
        # (relative seats 1..P-1) of holding it; learned from the global state, never read in play
        self.hand_places = hand_places
        self.hands = layer_init(nn.Linear(hidden_size, 52 * hand_places), std=0.01) if hand_places else None
        self._plan: tuple | None = None  # play_scores' views of the weights (_play_plan)
        self._plan_key: tuple | None = None
        self._plan_params: list[torch.Tensor] | None = None
        self._plan_layers: list[nn.Linear] = []
        self._plan_after: list[nn.Linear] = []
        self._slot_of = np.full(0, -1, dtype=np.int32)

    def forward(
        self,
        obs: torch.Tensor,
        legal_ids: torch.Tensor,
        legal_counts: torch.Tensor,
        advised: torch.Tensor | None = None,
        state: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        scores, value, _ = self.forward_hands(obs, legal_ids, legal_counts, advised, state, hands=False)
        return scores, value

    def forward_hands(
        self,
        obs: torch.Tensor,
        legal_ids: torch.Tensor,
        legal_counts: torch.Tensor,
        advised: torch.Tensor | None = None,
        state: torch.Tensor | None = None,
        hands: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``forward`` and, with ``hands``, the hands head's scores (``hand_logits``) from the same
        pass of the encoder (PPO's update with ``hands_coef``); ``None`` without."""
        dtype = compute_dtype(self.precision, obs.device.type)
        if dtype is None:
            return self._forward(obs, legal_ids, legal_counts, advised, state, hands)
        with torch.autocast(obs.device.type, dtype=dtype):
            scores, value, held = self._forward(obs, legal_ids, legal_counts, advised, state, hands)
        return scores.float(), value.float(), None if held is None else held.float()

    def _forward(
        self,
        obs: torch.Tensor,
        legal_ids: torch.Tensor,
        legal_counts: torch.Tensor,
        advised: torch.Tensor | None,
        global_state: torch.Tensor | None = None,
        hands: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        if self.advice_size and advised is None:
            raise ValueError(f"this network is advised by {self.advice!r}: forward needs the advised slots")
        state = self.state_encoder(obs)
        held = self._hand_scores(state) if hands else None
        if not self.critic_size:
            value = self.value(state).squeeze(-1)
        elif global_state is not None:
            value = self.value(global_state).squeeze(-1)
        else:  # playing: no one may read every hand, and nothing needs the value
            value = torch.full(obs.shape[:1], float("nan"), device=obs.device)
        if self.fused_pairs(obs):
            return self._fused_scores(state, legal_ids, legal_counts, advised), value, held
        valid = legal_mask(legal_counts, legal_ids.shape[1])
        rows = torch.repeat_interleave(torch.arange(len(legal_counts), device=obs.device), legal_counts)
        plays = legal_ids[valid]
        features = self.features[plays]
        if self.advice_size and advised is not None:  # the second: implied by the first (checked above)
            slots = torch.arange(legal_ids.shape[1], device=obs.device)[None, :]
            flag = (slots == advised[:, None])[valid].to(features.dtype)
            features = torch.cat([features, flag[:, None]], dim=1)
        pre = self.state_proj(state)[rows] + self.action_proj(features)
        if self.after is not None:  # the hand left after each play: the observer's hand less the play's cards
            pre = pre + self.after(obs[rows, HAND] - self.features[plays, :52])
        h = torch.relu(pre)
        flat = self.score(self.pair(h)).squeeze(-1)
        scores = torch.full(legal_ids.shape, float("-inf"), dtype=flat.dtype, device=obs.device)
        scores = scores.masked_scatter(valid, flat)
        return scores, value, held

    def hand_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B, 52, hand_places)``: the hands head's score, for each card and other place (relative
        seats 1..P-1), that the place holds the card (a softmax over the places, the last axis)."""
        return self._hand_scores(self.state_encoder(obs))

    def _hand_scores(self, state: torch.Tensor) -> torch.Tensor:
        """The hands head on encoded states: ``(B, 52, hand_places)``."""
        if self.hands is None:
            raise ValueError("this network has no hands head (trained with hands_coef 0)")
        return self.hands(state).view(len(state), 52, self.hand_places)

    def fused_pairs(self, obs: torch.Tensor) -> bool:
        """Whether this pass scores the pairs with ``bigtwo.train.pair_scores`` (CPU, float32, one pair
        layer, no ``hand_after``) rather than torch ops (the same scores up to float32 rounding)."""
        return (
            obs.device.type == "cpu"
            and not len(self.pair)
            and self.after is None
            and not torch.is_autocast_enabled("cpu")
        )

    def _fused_scores(
        self, state: torch.Tensor, legal_ids: torch.Tensor, legal_counts: torch.Tensor, advised: torch.Tensor | None
    ) -> torch.Tensor:
        slot_of = np.full(len(self.features), -1, dtype=np.int32)
        counts = legal_counts.to(torch.int64)
        plays, col = distinct_plays(legal_ids.numpy(), counts.numpy(), slot_of)
        weight = self.action_proj.weight
        projected = nn.functional.linear(self.features[torch.from_numpy(plays)], weight[:, :ACTION_FEATURES])
        flag = weight[:, ACTION_FEATURES] if self.advice_size else weight.new_zeros(weight.shape[0])
        # advised is given whenever advice_size is set (_forward checks): the second test only tells mypy
        advised = advised.to(torch.int64) if self.advice_size and advised is not None else torch.full_like(counts, -1)
        return PairScores.apply(
            self.state_proj(state), projected, flag, self.score.weight[0], self.score.bias,
            torch.from_numpy(col), counts, advised,
        )  # fmt: skip

    def advise(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray | None:
        """The adviser's choice per row (a slot of its legal list; ``bigtwo.train.advice``), or ``None``
        for a network without advice."""
        if not self.advice_size:
            return None
        if self.adviser is None:
            raise ValueError(f"this network is advised by {self.advice!r} but has no adviser attached")
        return self.adviser.picks(obs, legal_ids, legal_counts)

    @torch.no_grad()
    def play_scores(
        self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray, advised: np.ndarray | None = None
    ) -> np.ndarray:
        """The scores of ``score_arrays`` alone, float32 ``(B, L)`` (``-inf`` past each row's count),
        for playing: no value, no autograd. On the CPU in float32 with one pair layer it calls the
        layers' own ops and the pair kernel directly, without the modules' and
        ``torch.autograd.Function``'s overhead per call: without ``hand_after``, the same operations
        in the same order, so the same numbers bit for bit (a test pins it), in about half the time on
        a search's small batches (~15 rows). With ``hand_after``, its first layer is taken once per
        row and once per distinct play instead of once per pair (``hand_after_inputs``): the same
        scores up to float32 rounding, in about half the time of a rollout's batch. Elsewhere it is
        ``score_arrays``' scores."""
        plan = self._play_plan()
        if plan is None:
            return self.score_arrays(obs, legal_ids, legal_counts, advised)[0].float().cpu().numpy()
        encoder, state_proj, action_w, flag, w, bias, after = plan
        if advised is None:
            advised = self.advise(obs, legal_ids, legal_counts)
        counts = np.ascontiguousarray(legal_counts, dtype=np.int64)
        observed = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        x = observed
        for weight, b in encoder:
            x = torch.relu(nn.functional.linear(x, weight, b))
        state = nn.functional.linear(x, *state_proj)
        plays, col = distinct_plays(np.ascontiguousarray(legal_ids, dtype=np.int64), counts, self._slot_of)
        play_features = self.features[torch.from_numpy(plays)]
        projected = nn.functional.linear(play_features, action_w)
        slots = np.full(len(counts), -1, np.int64) if advised is None else np.asarray(advised, dtype=np.int64)
        pairs = None
        if after is not None:  # G(hand - cards) = W2 relu(W1 hand + b1 - W1 cards) + b2, per pair
            (w1, b1), (w2, b2) = after
            hand = nn.functional.linear(observed[:, HAND], w1, b1)
            cards = nn.functional.linear(play_features[:, :52], w1)
            # torch's allocation (aligned as every other input of the products)
            hidden = torch.empty((int(counts.sum()), w1.shape[0]), dtype=torch.float32)
            hand_after_inputs(hand.numpy(), cards.numpy(), col, counts, hidden.numpy())
            pairs = nn.functional.linear(hidden, w2, b2).numpy()
        flag = np.ascontiguousarray(flag)  # a column of the projection's weight: 64 numbers copied a pass
        return score_pairs(state.numpy(), projected.numpy(), flag, w, bias, col, counts, slots, pairs)

    def _play_plan(self) -> tuple | None:
        """What ``play_scores`` reads of the weights: views of them, never copies (the trainers'
        fused optimizer changes weights in place without moving their version counters, so a copy
        would go stale), taken again only when a weight's storage moved (``param.data = ...``,
        ``.to(...)``); ``None`` where the fast path does not apply: off the CPU, with more than one
        pair layer, in another precision, or an encoder that is not Linear-ReLU pairs."""
        if (
            compute_dtype(self.precision, "cpu") is not None
            or self.features.device.type != "cpu"
            or len(self.pair)
            or torch.is_autocast_enabled("cpu")
        ):
            return None
        if self._plan_params is None:  # the modules read, found once (the structure never changes)
            layers = [m for m in self.state_encoder if isinstance(m, nn.Linear)]
            if len(layers) * 2 != len(self.state_encoder):  # not Linear-ReLU pairs: the modules' own pass
                return None
            self._plan_layers = layers
            after = [] if self.after is None else [m for m in self.after if isinstance(m, nn.Linear)]
            self._plan_after = after
            self._plan_params = [
                p for m in (*layers, self.state_proj, self.action_proj, self.score, *after) for p in m.parameters()
            ]
        key = tuple(p.data_ptr() for p in self._plan_params)
        if self._plan_key != key:
            weight = self.action_proj.weight.detach()
            flag = weight[:, ACTION_FEATURES] if self.advice_size else weight.new_zeros(weight.shape[0])
            views = [(m.weight.detach(), m.bias.detach()) for m in self._plan_layers]
            self._plan = (
                views,
                (self.state_proj.weight.detach(), self.state_proj.bias.detach()),
                weight[:, :ACTION_FEATURES],
                flag.numpy(),
                self.score.weight.detach()[0].numpy(),
                self.score.bias.detach().numpy(),
                tuple((m.weight.detach(), m.bias.detach()) for m in self._plan_after) or None,
            )
            self._plan_key = key
            self._slot_of = np.full(len(self.features), -1, dtype=np.int32)  # distinct_plays' scratch
        return self._plan

    @torch.no_grad()
    def score_arrays(
        self,
        obs: np.ndarray,
        legal_ids: np.ndarray,
        legal_counts: np.ndarray,
        advised: np.ndarray | None = None,
        state: np.ndarray | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``forward`` on NumPy arrays, moved to the network's device, without gradients: the
        scores of each row's legal plays (padding ``-inf``) and the values (a global critic's from
        ``state``, the rows' global states). An advised network asks its adviser when ``advised``
        is not given."""
        device = self.features.device
        if advised is None:
            advised = self.advise(obs, legal_ids, legal_counts)
        return self(
            torch.as_tensor(np.asarray(obs, np.float32), device=device),
            torch.as_tensor(np.asarray(legal_ids).astype(np.int64), device=device),
            torch.as_tensor(np.asarray(legal_counts).astype(np.int64), device=device),
            None if advised is None else torch.as_tensor(np.asarray(advised, np.int64), device=device),
            None if state is None else torch.as_tensor(np.asarray(state, np.float32), device=device),
        )


def build_network(kwargs: dict, variant: Variant) -> ActionScorer:
    """An ``ActionScorer`` with the saved constructor ``kwargs``, scoring ``variant``'s plays (with
    the adviser its ``advice`` names, if any)."""
    advice = str(kwargs.get("advice", ""))
    return ActionScorer(features=action_features(variant), adviser=make_adviser(advice, variant), **kwargs)

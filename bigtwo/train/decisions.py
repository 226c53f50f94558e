"""The learner's decisions, linked per (match slot, seat), with their rewards: what rollouts store.

In self-play on the vector env every step is one decision of one seat in each match, and a
seat's rewards arrive only when a game ends (on another seat's step, usually). So a seat's
trajectory is its own decision sequence: decision ``d`` of seat ``s`` in slot ``e`` is followed by
``next[d]``, the next decision of that same seat in that slot; ``reward[d]`` is everything the
seat received between ``d`` and ``next[d]``; ``done[d]`` marks the seat's last decision of an
episode (a match; with ``SAME_STEP`` autoreset the match that ended and the one that started in
the same step are never linked, since ``credit`` clears the links of the ended slots).

Only real decisions are recorded: where a seat has a single legal play (a forced pass, ~40% of
the steps in random play) the trainers play it without the network, and the rewards flow to the
seat's previous decision.

A decision is *finished* once its successor or its episode's end is known. PPO trains on the
finished ones and bootstraps from the value of ``next[d]``, which may still be unfinished (the
rollout ended before that seat acted again): such tail decisions are carried to the next
rollout (``compact``), exactly as a rollout's last observation is the next rollout's first.
Deep Monte-Carlo needs each decision's whole return, so it carries every decision whose
episode has not ended yet.

``take(idx, targets)`` copies finished decisions out as ``Decisions``: the rows a learner trains
on, with their targets (advantages, returns), free of the store's links. A rollout hands its
learner one ``Decisions`` (``bigtwo.train.rollout``); batches of several rollouts (Ray actors) are
joined with ``Decisions.concat``.

>>> import numpy as np
>>> store = DecisionStore(num_envs=1, players=2, obs_size=3)
>>> for seat in (0, 1, 0):
...     _ = store.record(np.array([0]), np.array([seat]), np.zeros((1, 3)), np.array([[0]]), np.array([1]),
...                      np.array([0]), np.zeros(1), np.zeros(1))
>>> store.credit(np.array([[-2.0, 0.0]]), np.array([True]))
>>> store.next[:3].tolist(), store.reward[:3].tolist(), store.done[:3].tolist()
([2, -1, -1], [0.0, 0.0, -2.0], [False, True, True])
>>> ret, ok = mc_returns(store.reward[:3], store.done[:3], store.next[:3])
>>> ret.tolist(), ok.tolist()
([-2.0, 0.0, -2.0], [True, True, True])
"""

from __future__ import annotations

import numpy as np

from bigtwo.env.engine.jit import njit

ROW_FIELDS = (
    "obs",
    "state",
    "start",
    "counts",
    "env",
    "seat",
    "pick",
    "advised",
    "logprob",
    "value",
    "reward",
    "done",
    "next",
)


def padded_legal(plays: np.ndarray, start: np.ndarray, counts: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Legal plays of rows ``idx`` (each ``plays[start : start + counts]``), padded
    ``(len(idx), widest)`` int64 (0 past each count)."""
    counts = counts[idx]
    width = max(int(counts.max()) if len(idx) else 1, 1)
    offsets = np.arange(width)[None, :]
    valid = offsets < counts[:, None]
    pos = np.where(valid, start[idx][:, None] + offsets, 0)
    return np.where(valid, plays[pos], 0).astype(np.int64)


TAKEN_FIELDS = ("obs", "state", "counts", "pick", "advised", "logprob", "value")


class _Rows:
    """Reading rows of decisions whose legal plays lie in one flat ``plays`` array (row ``i``'s are
    ``plays[start[i] : start[i] + counts[i]]``): ``Decisions`` and ``DecisionStore`` alike."""

    obs: np.ndarray
    state: np.ndarray  # the global state of each decision (``TrainConfig.critic: global``), else (rows, 0)
    start: np.ndarray
    counts: np.ndarray
    plays: np.ndarray
    pick: np.ndarray
    advised: np.ndarray
    logprob: np.ndarray
    value: np.ndarray

    def legal(self, idx: np.ndarray) -> np.ndarray:
        """Legal plays of rows ``idx``, padded ``(len(idx), widest)`` int64 (0 past each count)."""
        return padded_legal(self.plays, self.start, self.counts, idx)

    def played(self, idx: np.ndarray) -> np.ndarray:
        """The play chosen at rows ``idx`` (action ids)."""
        return self.plays[self.start[idx] + self.pick[idx]].astype(np.int64)

    def batch(self, idx: np.ndarray) -> dict[str, np.ndarray]:
        """Rows ``idx`` as arrays, the legal lists padded to the batch's widest."""
        return {
            "obs": self.obs[idx],
            "state": self.state[idx],
            "legal": self.legal(idx),
            "counts": self.counts[idx],
            "pick": self.pick[idx],
            "advised": self.advised[idx].astype(np.int64),
            "logprob": self.logprob[idx],
            "value": self.value[idx],
        }


class Decisions(_Rows):
    """Finished decisions taken out of a ``DecisionStore`` (``take``): what an update trains on.

    Rows ``0 .. size-1`` with ``obs``, ``counts``, ``pick``, ``logprob``, ``value``, their legal
    plays as one flat array (row ``i``'s are ``plays[start[i] : start[i] + counts[i]]``) and
    ``targets``, arrays of ``size`` rows by name (``advantages`` and ``returns`` for PPO,
    ``returns`` for Deep Monte-Carlo)."""

    def __init__(self, rows: dict[str, np.ndarray], plays: np.ndarray, targets: dict[str, np.ndarray]) -> None:
        self.obs, self.counts = rows["obs"], rows["counts"]
        self.state = rows["state"]
        self.pick, self.logprob, self.value = rows["pick"], rows["logprob"], rows["value"]
        self.advised = rows["advised"]  # the adviser's slot (bigtwo.train.advice), -1 without advice
        self.plays = plays
        self.start = np.cumsum(self.counts, dtype=np.int64) - self.counts
        self.targets = targets

    @property
    def size(self) -> int:
        return len(self.counts)

    @classmethod
    def concat(cls, parts: list[Decisions]) -> Decisions:
        """The rows of ``parts`` one after the other (``parts`` in order; at least one)."""
        if len(parts) == 1:
            return parts[0]
        rows = {name: np.concatenate([getattr(p, name) for p in parts]) for name in TAKEN_FIELDS}
        targets = {k: np.concatenate([p.targets[k] for p in parts]) for k in parts[0].targets}
        return cls(rows, np.concatenate([p.plays for p in parts]), targets)


class DecisionStore(_Rows):
    """Growable arrays of decisions; see the module docstring. ``size`` rows are in use.

    Each decision's legal plays are a segment of one flat array (``plays[start : start + counts]``),
    so memory follows the number of legal plays, not the widest list (thousands of plays at the
    start of a 26-card hand)."""

    def __init__(self, num_envs: int, players: int, obs_size: int, capacity: int = 4096, state_size: int = 0) -> None:
        self.num_envs, self.players, self.obs_size, self.state_size = num_envs, players, obs_size, state_size
        self.size = 0
        self.plays_size = 0
        self.last = np.full((num_envs, players), -1, np.int64)  # pending decision per (slot, seat)
        self._alloc(capacity, 8 * capacity)

    def _alloc(self, capacity: int, plays: int) -> None:
        self.obs = np.zeros((capacity, self.obs_size), np.float32)
        self.state = np.zeros((capacity, self.state_size), np.float32)  # global states, for a global critic
        self.start = np.zeros(capacity, np.int64)  # first of its legal plays in ``plays``
        self.counts = np.zeros(capacity, np.int32)
        self.env = np.zeros(capacity, np.int32)
        self.seat = np.zeros(capacity, np.int8)
        self.pick = np.zeros(capacity, np.int32)  # position of the play in its legal list
        self.advised = np.full(capacity, -1, np.int32)  # position of the adviser's play (bigtwo.train.advice), or -1
        self.logprob = np.zeros(capacity, np.float32)
        self.value = np.zeros(capacity, np.float32)
        self.reward = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, bool)
        self.next = np.full(capacity, -1, np.int64)
        self.plays = np.zeros(plays, np.int32)

    def _grow(self, rows: int, plays: int) -> None:
        cap, pcap = self.obs.shape[0], self.plays.shape[0]
        if self.size + rows <= cap and self.plays_size + plays <= pcap:
            return
        old = {name: getattr(self, name)[: self.size] for name in ROW_FIELDS}
        old_plays = self.plays[: self.plays_size]
        while cap < self.size + rows:
            cap *= 2
        while pcap < self.plays_size + plays:
            pcap *= 2
        self._alloc(cap, pcap)
        for name, arr in old.items():
            getattr(self, name)[: self.size] = arr
        self.plays[: self.plays_size] = old_plays

    def record(
        self,
        env: np.ndarray,
        seat: np.ndarray,
        obs: np.ndarray,
        legal: np.ndarray,
        counts: np.ndarray,
        pick: np.ndarray,
        logprob: np.ndarray,
        value: np.ndarray,
        advised: np.ndarray | None = None,
        state: np.ndarray | None = None,
    ) -> np.ndarray:
        """Add one decision per row (slots ``env``, seats ``seat``, legal plays ``legal[:, :counts]``,
        global states ``state`` where the store keeps them); returns their indices and links each to
        the previous pending decision of its (slot, seat)."""
        k = len(env)
        counts = np.asarray(counts)
        flat = legal[np.arange(legal.shape[1])[None, :] < counts[:, None]]  # row by row
        self._grow(k, len(flat))
        idx = np.arange(self.size, self.size + k)
        self.obs[idx] = obs
        if self.state_size:
            if state is None:
                raise ValueError(
                    f"this store keeps each decision's global state ({self.state_size} numbers): give state"
                )
            self.state[idx] = state
        self.start[idx] = self.plays_size + np.cumsum(counts) - counts
        self.plays[self.plays_size : self.plays_size + len(flat)] = flat
        self.plays_size += len(flat)
        self.counts[idx] = counts
        self.env[idx] = env
        self.seat[idx] = seat
        self.pick[idx] = pick
        self.advised[idx] = -1 if advised is None else advised
        self.logprob[idx] = logprob
        self.value[idx] = value
        self.reward[idx] = 0.0
        self.done[idx] = False
        self.next[idx] = -1
        prev = self.last[env, seat]
        linked = prev >= 0
        self.next[prev[linked]] = idx[linked]
        self.last[env, seat] = idx
        self.size += k
        return idx

    def credit(self, rewards: np.ndarray, ended: np.ndarray) -> None:
        """After a step: add ``rewards (N, P)`` to each seat's pending decision; where ``ended``
        (N,) the episode is over, so mark those decisions done and clear the slot's links."""
        pending = self.last >= 0
        self.reward[self.last[pending]] += rewards[pending].astype(np.float32)
        closing = pending & ended[:, None]
        self.done[self.last[closing]] = True
        self.last[ended] = -1

    def compact(self, keep: np.ndarray) -> None:
        """Keep only the decisions where ``keep`` (size,) is true, in order (links remapped).
        Every kept decision's successor must be kept too (true for unfinished ones)."""
        keep = np.asarray(keep, bool)
        new_index = np.append(np.cumsum(keep) - 1, -1)  # old index -> new one; index ``size`` (no link) -> -1
        n = int(keep.sum())
        counts = self.counts[: self.size][keep].astype(np.int64)
        new_start = np.cumsum(counts) - counts
        total = int(counts.sum())
        take = np.repeat(self.start[: self.size][keep] - new_start, counts) + np.arange(total)
        self.plays[:total] = self.plays[take]
        self.plays_size = total
        for name in ROW_FIELDS:
            arr = getattr(self, name)
            arr[:n] = arr[: self.size][keep]
        self.start[:n] = new_start
        nxt = self.next[:n]
        self.next[:n] = new_index[np.where(nxt >= 0, nxt, self.size)]
        self.last = new_index[np.where(self.last >= 0, self.last, self.size)]
        self.size = n

    def take(self, idx: np.ndarray, targets: dict[str, np.ndarray]) -> Decisions:
        """Copies of decisions ``idx`` (in that order) with ``targets`` (arrays over the store's rows,
        taken at ``idx``), their legal plays packed flat; the store is unchanged."""
        idx = np.asarray(idx, np.int64)
        counts = self.counts[idx]
        total = int(counts.sum(dtype=np.int64))
        within = np.arange(total) - np.repeat(np.cumsum(counts, dtype=np.int64) - counts, counts)
        # an integer index already copies: no second copy (it was a quarter of a PPO rollout's time)
        plays = self.plays[np.repeat(self.start[idx], counts) + within]
        rows = {name: getattr(self, name)[idx] for name in TAKEN_FIELDS}
        return Decisions(rows, plays, {k: np.asarray(v)[idx] for k, v in targets.items()})

    def state_dict(self) -> dict[str, np.ndarray]:
        """The rows in use, their legal plays and the pending links (for checkpoints)."""
        out = {name: getattr(self, name)[: self.size].copy() for name in ROW_FIELDS}
        out["plays"] = self.plays[: self.plays_size].copy()
        out["last"] = self.last.copy()
        return out

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore what ``state_dict`` saved."""
        n, m = len(state["counts"]), len(state["plays"])
        self._alloc(max(n, 16), max(m, 128))
        for name in ROW_FIELDS:
            if name in ("advised", "state") and name not in state:  # a checkpoint from before advice, critic
                continue
            getattr(self, name)[:n] = state[name]
        self.plays[:m] = state["plays"]
        self.size, self.plays_size = n, m
        self.last = np.asarray(state["last"]).astype(np.int64).copy()


@njit
def gae(reward, done, nxt, value, gamma, lam):
    """Advantages and returns over linked decisions (``nxt[d] > d``); ``ok[d]``: ``d`` is finished.
    A finished decision whose successor is unfinished bootstraps from that successor's value."""
    n = reward.shape[0]
    adv = np.zeros(n, np.float32)
    ok = np.zeros(n, np.bool_)
    for d in range(n - 1, -1, -1):
        if done[d]:
            adv[d] = reward[d] - value[d]
            ok[d] = True
        elif nxt[d] >= 0:
            j = nxt[d]
            delta = reward[d] + gamma * value[j] - value[d]
            adv[d] = delta + (gamma * lam * adv[j] if ok[j] else 0.0)
            ok[d] = True
    return adv, adv + value, ok


@njit
def mc_returns(reward, done, nxt):
    """Undiscounted return to the episode's end of each decision; ``ok[d]``: that end is known."""
    n = reward.shape[0]
    ret = np.zeros(n, np.float32)
    ok = np.zeros(n, np.bool_)
    for d in range(n - 1, -1, -1):
        if done[d]:
            ret[d] = reward[d]
            ok[d] = True
        elif nxt[d] >= 0 and ok[nxt[d]]:
            ret[d] = reward[d] + ret[nxt[d]]
            ok[d] = True
    return ret, ok

"""Determinized Monte-Carlo search: sample the hidden hands, try each candidate play, roll every
sample out to the end of the game with the heuristic, keep the play with the best mean payoff.

Per move (for a seat with more than one legal play):

1. **Candidates.** The heuristic scores every legal play; the ``top_k`` best are kept, and pass
   when it is legal. A play that ends the game is taken at once. With a ``prior`` (any agent
   with a ``scores`` method, e.g. a trained ``PolicyAgent``: the network behind ``strong``), the
   prior's ``PRIOR_TOP`` best plays are searched too. (Ranking the candidates by the prior
   alone scored worse: see README, "The strong config".)
2. **Determinization.** The unseen cards are all 52 less the own hand and every card played
   this game. Each sample deals them at random to the opponents, each getting exactly the
   number of cards it holds (read from the observation); whatever is left over stayed undealt
   (three players, two players with 13 cards, or any deal of fewer than 52 cards). With
   ``infer="passes"``, each sample is weighed by the passes made on the play now on the table:
   those opponents still hold what they held when they passed, and for each one whose sampled
   hand would have made the heuristic play instead, the sample's weight is multiplied by
   ``PASS_WEIGHT`` (not 0: the table's players are not the heuristic, and may hold back).
3. **Rollouts.** One batched ``Engine`` holds ``samples x candidates`` copies of the position
   (``Engine.set_position``, the observer as seat 0, the other seats relative to it, so in the
   game's own play order even when that game is reversed, ``turn_order``); each copy
   plays its candidate, then every seat plays the heuristic (the observer's with ``weights``, the
   others with ``opponent_weights``; with a mix of sets, ``"default+collect"``, the samples take
   them in turn, so each set models the opponents in its share of the deals) until that copy's game is over, all
   in one compiled kernel (``rollout_state``) run on ``threads`` slices of the copies.
   Each candidate is tried on the same samples, so they are compared on equal deals.
4. **Choice.** The candidate with the highest mean payoff (weighted mean, with ``infer``) for
   the observer's seat; ties go to the heuristic's order. With a prior and ``trust=Z``, the
   prior's best play stands unless another candidate beats it on the same samples by more than
   ``Z`` standard errors of the paired difference (the best such candidate then): a strong
   network's play is not overturned by the noise of a few dozen rollouts per candidate.

Budget: ``simulations`` rollouts per move in all (split evenly over the candidates), or
``seconds`` of search per move (batches are run until the time is spent; at least one). With
neither, ``DEFAULT_SIMULATIONS``. With ``scale="cards"``, ``simulations`` is the budget of a
move made with every dealt card still in hand, and a later move gets more rollouts, as many
times more as the cards in all hands are fewer (at most ``MAX_SCALE`` times): a rollout's
length follows the cards left to play, so every move costs about what the first one does, and
the same position always gets the same number (unlike ``seconds``).

Searching only reads the observation and the legal list: the hidden hands are sampled, never
peeked. Under the last-card ``liability`` rule the engine flags breaches inside rollouts, so a
breach is scored by its consequences; breaches made before the searched move are not in the
observation and are taken to be none. Only the current game is rolled out (a match's later
games and its scores are not).

The rollouts' compiled drivers live here: ``heuristic_at`` is the heuristic's decision for a
game's seat to act read from the engine state (that seat's own view only), ``replies_state``
asks it of every game (how passers would have answered), and ``rollout_state`` plays games out.

>>> from bigtwo.env.engine.engine import Engine
>>> eng = Engine("taiwan", num_matches=1, seed=3)
>>> agent = SearchAgent(eng.variant, seed=0, simulations=24)
>>> ids, n = eng.legal_actions()
>>> int(agent.act(eng.observe(), ids, n)[0]) in ids[0, :n[0]].tolist()
True
"""

from __future__ import annotations

import math
import time
from typing import Any, cast

import numpy as np

from bigtwo.agents.base import Agent, Scorer
from bigtwo.agents.determinize import deal_hands, read_position
from bigtwo.agents.heuristic import BIG, HeuristicAgent, Position, decide, new_work, weight_mix
from bigtwo.env.checks import check_count, is_finite_number
from bigtwo.env.engine import kernels
from bigtwo.env.engine.engine import THREADS, Engine, run_batched
from bigtwo.env.engine.jit import njit
from bigtwo.env.engine.observation import FULL, absolute_seat, relative_seat
from bigtwo.env.rules.variant import Variant

DEFAULT_SIMULATIONS = 1000
DEFAULT_TOP_K = 5
SCHEDULES = ("even", "halving")  # how ``simulations`` are shared over the candidates
SCALES = ("none", "cards")  # whether ``simulations`` grows as the hands empty
MAX_SCALE = 4.0  # scale=cards: at most this many times ``simulations``
INFERENCES = ("none", "passes")  # what the sampled hands are weighted by
PASS_WEIGHT = 0.25  # infer=passes: a sample's weight for each passer that would have played on it
PRIOR_TOP = 2  # with a prior: its best plays searched besides the heuristic's top_k
ROWS_PER_BATCH = 192  # rollouts stepped together in one engine
MAX_ROLLOUT_STEPS = 5000  # a guard: every game ends long before this


@njit
def heuristic_at(g, rules, state, lookups, w, counts, scores, work):
    """Index into ``state.legal[g]`` of the heuristic's play, with weights ``w``, for game ``g``'s
    seat to act, read from the engine state (that seat's own view only: its hand, the cards played,
    the counts). ``counts`` (players), ``scores`` and ``work`` (``new_work``, as wide as
    ``state.legal``) are scratch."""
    n = state.legal_n[g]
    if n == 1:
        return 0
    seat = state.current[g]
    hand = state.hands[g, seat]
    seen = hand
    players, reverse = rules.ip[kernels.IP_PLAYERS], state.reverse[g]
    for k in range(players):
        s = absolute_seat(seat, k, players, reverse)
        seen |= state.played[g, s]
        counts[k] = state.counts[g, s]
    owner = relative_seat(seat, state.table_seat[g], players, reverse) if state.table_seat[g] >= 0 else np.int64(-1)
    table, duty, opening = np.int64(state.table_action[g]), np.int64(state.duty[g]), np.int64(state.opening[g])
    pos = Position(hand, ~seen & FULL, counts, table, np.int64(owner), duty, opening)
    return decide(pos, state.legal[g], n, rules, lookups, w, False, scores, work)


@njit
def replies_state(choice, scores, rules, state, lookups, w_rows):
    """``choice[g]``: the heuristic's play (an action id, 0 a pass), with weights ``w_rows[g]``,
    for each game's seat to act, read from the engine state (its legal lists current); search
    weighs sampled hands with it."""
    counts = np.zeros(rules.ip[kernels.IP_PLAYERS], dtype=np.int64)
    work = new_work(state.legal.shape[1])
    for g in range(state.seeds.shape[0]):
        i = heuristic_at(g, rules, state, lookups, w_rows[g], counts, scores[g], work)
        choice[g] = state.legal[g, i]


@njit(nogil=True)
def rollout_state(first, scores, payoff, others, rules, state, lookups, w, max_steps):
    """Rollouts: in each game play ``first[g]`` (a legal play of its seat to act), then the
    heuristic at every seat until the game is over (or ``max_steps`` plays, a guard), with
    weights ``w`` at seat 0 and ``others[g]`` at the other seats;
    ``payoff[g]`` gets seat 0's payoff of the game (0 if it did not end). The state's matches
    must be one game long without autoreset, as ``SearchAgent`` builds them. Each game is played
    to its end on its own (no lockstep), so slices of the batch can run in threads."""
    counts = np.zeros(rules.ip[kernels.IP_PLAYERS], dtype=np.int64)
    work = new_work(state.legal.shape[1])
    play = np.empty(1, dtype=np.int64)  # game g's play: the kernels step the range g .. g + 1
    for g in range(state.seeds.shape[0]):
        payoff[g] = 0.0
        play[0] = first[g]
        kernels.step_range(g, g + 1, play, rules, state, False)
        steps = 0
        while not state.over[g] and steps < max_steps:
            kernels.legal_range(g, g + 1, rules, state)
            ww = w if state.current[g] == 0 else others[g]
            play[0] = state.legal[g, heuristic_at(g, rules, state, lookups, ww, counts, scores[g], work)]
            kernels.step_range(g, g + 1, play, rules, state, False)
            steps += 1
        if state.over[g]:
            payoff[g] = state.payoffs[g, 0]


class SearchAgent(Agent):
    """Determinized Monte-Carlo search over the heuristic's top plays (see the module docstring).

    ``simulations``: rollouts per move in all; ``seconds``: time per move instead; ``top_k``:
    candidates kept (pass is added when legal); ``weights``: the heuristic's weights (a name of
    ``heuristic.WEIGHT_SETS`` or the numbers) for the candidates and the observer's seat in the
    rollouts; ``opponent_weights``: those of the other seats in the rollouts (default: ``weights``),
    or a mix of sets (``"default+collect"``: ``heuristic.weight_mix``) taken in turn by the samples;
    ``threads``: threads playing the rollouts (default one per core, up to 4; the result does not
    depend on it); ``trust``: with a ``prior``, the standard errors by which a candidate must beat
    the prior's best play to replace it (``None``: the best mean wins; needs ``schedule="even"``)."""

    name = "search"
    provenance: dict[str, Any] | None = None  # strong's: what made its prior's weights (set by the registry)

    def __init__(
        self,
        variant: Variant,
        seed: int | None = None,
        simulations: int | None = None,
        seconds: float | None = None,
        top_k: int = DEFAULT_TOP_K,
        weights: np.ndarray | str | None = None,
        opponent_weights: np.ndarray | str | None = None,
        prior: Agent | None = None,
        threads: int | None = None,
        schedule: str = "even",
        scale: str = "none",
        infer: str = "none",
        trust: float | None = None,
    ) -> None:
        super().__init__(variant, seed)
        if prior is not None and not callable(getattr(prior, "scores", None)):
            raise ValueError(
                f"prior must be an agent with a scores(obs, legal_ids, legal_counts) method, got {prior!r}"
            )
        self.prior = cast("Scorer | None", prior)  # checked above: it has scores()
        if simulations is not None:
            simulations = check_count("simulations", simulations, "rollouts per move")
        if seconds is not None and not (is_finite_number(seconds) and seconds > 0):
            raise ValueError(f"seconds must be a positive finite number (seconds per move), got {seconds!r}")
        self.threads = (
            THREADS if threads is None else check_count("threads", threads, "rollout threads; default one per core")
        )
        if schedule not in SCHEDULES:
            raise ValueError(
                f"schedule must be one of {', '.join(SCHEDULES)} (how simulations are shared), got {schedule!r}"
            )
        if schedule == "halving" and seconds is not None:
            raise ValueError("schedule=halving shares a number of simulations; with seconds use schedule=even")
        self.schedule = schedule
        if scale not in SCALES:
            raise ValueError(
                f"scale must be one of {', '.join(SCALES)} (whether later moves get more rollouts), got {scale!r}"
            )
        if scale != "none" and seconds is not None:
            raise ValueError(f"scale={scale} grows a number of simulations; with seconds use scale=none")
        self.scale = scale
        if infer not in INFERENCES:
            raise ValueError(
                f"infer must be one of {', '.join(INFERENCES)} (what weighs the sampled hands), got {infer!r}"
            )
        self.infer = infer
        if trust is not None:
            if not (is_finite_number(trust) and trust >= 0):
                raise ValueError(
                    f"trust must be a finite number >= 0 (standard errors a candidate must beat the prior's play by), "
                    f"got {trust!r}"
                )
            if prior is None:
                raise ValueError("trust weighs the prior's best play; it needs a prior (e.g. strong's network)")
            if schedule != "even":
                raise ValueError("trust compares every candidate on the same samples; use schedule=even")
        self.trust = None if trust is None else float(trust)
        top_k = check_count("top_k", top_k, "candidate plays")
        if simulations is None and seconds is None:
            simulations = DEFAULT_SIMULATIONS
        self.simulations = simulations
        self.seconds = seconds
        self.top_k = int(top_k)
        self.heuristic = HeuristicAgent(variant, weights=weights)
        self.ctx = self.heuristic.ctx
        # what the other seats play in rollouts (and how passers would have answered): by default the same
        # (M, NUM_WEIGHTS): a mix of several sets plays them in turn, one per sampled deal
        self.opponent_weights = self.ctx.weights[None] if opponent_weights is None else weight_mix(opponent_weights)
        # rollouts end with the current game: one game per match, no match target
        self.sim_variant = (
            variant if variant.games == 1 and variant.target_score == 0 else variant.replace(games=1, target_score=0)
        )
        self._engines: dict[int, tuple[Engine, np.ndarray]] = {}
        self.stats = {"moves": 0, "searched": 0, "rollouts": 0, "seconds": 0.0}
        self.last_values: dict[int, float] = {}  # mean payoff of each candidate in the last search

    # ------------------------------------------------------------ acting

    def act(self, obs: np.ndarray, legal_ids: np.ndarray, legal_counts: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        ids = np.asarray(legal_ids)
        counts = np.asarray(legal_counts)
        scores = self.heuristic.scores(obs, ids, counts)
        prior = None if self.prior is None else self.prior.scores(obs, ids, counts)
        out = np.full(len(counts), -1, dtype=np.int64)
        for g in range(len(counts)):
            n = int(counts[g])
            if n <= 0:
                continue
            row_ids = ids[g, :n].astype(np.int64)
            order = np.argsort(-scores[g, :n], kind="stable")
            out[g] = row_ids[order[0]]
            if n == 1 or scores[g, order[0]] >= BIG / 2:
                continue
            cands = list(row_ids[order[: self.top_k]])
            favourite = -1  # with trust: the prior's best play, which stands unless clearly beaten
            if prior is not None:  # the prior's best plays join the heuristic's
                best = row_ids[np.argsort(-prior[g, :n], kind="stable")[:PRIOR_TOP]]
                cands += [a for a in best if a not in cands]
                if self.trust is not None:
                    favourite = cands.index(best[0])
            if row_ids[0] == 0 and 0 not in cands:
                cands.append(0)
            if len(cands) > 1:
                out[g] = self._search(np.asarray(obs[g]), np.array(cands, dtype=np.int64), favourite)
                self.stats["searched"] += 1
        self.stats["moves"] += len(counts)
        self.stats["seconds"] += time.perf_counter() - start
        return out

    def _engine(self, rows: int) -> tuple[Engine, np.ndarray]:
        """An engine of ``rows`` games for rollouts, and the heuristic's scratch scores."""
        if rows not in self._engines:
            eng = Engine(self.sim_variant, num_matches=rows, seed=0)
            self._engines[rows] = (eng, np.zeros((rows, eng.state.legal.shape[1])))
        return self._engines[rows]

    def _search(self, row: np.ndarray, cands: np.ndarray, favourite: int = -1) -> int:
        """The candidate with the best mean rollout payoff from the position in ``row``; with
        ``favourite >= 0`` (``trust``), that candidate unless one beats it by ``trust`` standard errors."""
        P = self.variant.players
        seen = read_position(row, self.variant, self.table)  # raises on an inconsistent observation
        played, table, table_seat = seen.played, seen.table, seen.table_seat
        passes, opening, left = seen.passes, seen.opening, seen.left

        # the opponents who passed on the play now on the table, in turn: each holds what it held then
        passers = [(table_seat + j) % P for j in range(1, passes + 1)] if self.infer == "passes" else []

        dealt_so_far = 0  # samples dealt for this move: the next one takes the next set of the mix

        def deal(samples: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """``samples`` guesses of every seat's hand (the observer's own in column 0), the
            weight of each guess (all 1 unless ``infer="passes"``), and the opponents' weights
            in each (the sets of ``opponent_weights`` in turn)."""
            nonlocal dealt_so_far
            mix = self.opponent_weights
            others = mix[(dealt_so_far + np.arange(samples)) % len(mix)]
            dealt_so_far += samples
            hands = deal_hands(self.rng, seen, samples)
            weight = np.ones(samples)
            for before, seat in enumerate(passers):
                would_play = self._replies(hands, others, played, seat, table, table_seat, before) != 0
                weight[would_play] *= PASS_WEIGHT
            return hands, weight, others

        def rollouts(hands: np.ndarray, others: np.ndarray, plays: np.ndarray) -> np.ndarray:
            """Payoffs (samples, plays): every play tried on every sample."""
            rows = self._rollout(
                np.repeat(hands, len(plays), axis=0),
                np.repeat(others, len(plays), axis=0),
                np.tile(plays, len(hands)),
                played,
                table,
                table_seat,
                passes,
                opening,
            )
            self.stats["rollouts"] += rows.size
            return rows.reshape(len(hands), len(plays))

        budget = self._budget(int(left.sum()))
        if self.schedule == "halving":
            assert budget is not None  # halving shares a number of simulations: __init__ refuses seconds with it
            best, means = self._halving(cands, deal, rollouts, budget)
        else:
            means, z = self._even(cands, deal, rollouts, budget, favourite)
            best = int(np.argmax(means))
            if favourite >= 0 and z is not None and self.trust is not None:  # a favourite: trust given, z measured
                beats = np.asarray(z > self.trust)
                best = int(np.argmax(np.where(beats, means, -np.inf))) if beats.any() else favourite
        self.last_values = {int(a): float(v) for a, v in zip(cands, means, strict=True)}
        return int(cands[best])

    def _budget(self, in_hands: int) -> int | None:
        """Rollouts for a move with ``in_hands`` cards in all hands (``None``: a time budget)."""
        if self.seconds is not None or self.simulations is None:  # the second: never without the first
            return None
        if self.scale == "none" or in_hands <= 0:
            return int(self.simulations)
        dealt = self.variant.players * self.variant.cards_per_player
        return int(round(self.simulations * min(MAX_SCALE, max(1.0, dealt / in_hands))))

    def _even(
        self, cands: np.ndarray, deal, rollouts, budget: int | None, favourite: int = -1
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Mean payoff of each candidate, every one tried on the same samples: ``budget``
        rollouts split evenly, or batches until ``seconds`` are spent; with ``favourite >= 0``,
        also each candidate's paired z against it (its mean gain over the favourite on the same
        samples in standard errors; 0 for the favourite, and where the difference never varies
        and is not positive)."""
        C = len(cands)
        diff = np.zeros(C)  # favourite: weighted sums of the paired differences and of their squares
        diff2 = np.zeros(C)
        weights2 = 0.0
        per_batch = max(1, ROWS_PER_BATCH // C)
        total = 0 if budget is None else max(1, -(-budget // C))  # samples, rounded up
        sums = np.zeros(C)
        weights = 0.0
        done = 0
        t0 = time.perf_counter()
        while True:
            s_b = per_batch if self.seconds is not None else min(per_batch, total - done)
            hands, weight, others = deal(s_b)
            values = rollouts(hands, others, cands)
            sums += weight @ values
            weights += weight.sum()
            if favourite >= 0:
                d = values - values[:, favourite : favourite + 1]
                diff += weight @ d
                diff2 += weight @ (d * d)
                weights2 += float(weight @ weight)
            done += s_b
            if self.seconds is None:
                if done >= total:
                    break
            else:
                spent = time.perf_counter() - t0
                if spent + spent / done * s_b > self.seconds:
                    break
        if favourite < 0:
            return sums / weights, None
        return sums / weights, _paired_z(diff, diff2, weights, weights2)

    def _halving(self, cands: np.ndarray, deal, rollouts, budget: int) -> tuple[int, np.ndarray]:
        """Sequential halving: ``ceil(log2 C)`` rounds share ``budget`` rollouts; each round tries the
        candidates still in on new samples (the same ones for all), then keeps the better half
        by mean payoff so far (ties by the heuristic's order). Returns the index of the best
        survivor, and every candidate's mean (a dropped one's as it was when dropped)."""
        C = len(cands)
        rounds = max(1, math.ceil(math.log2(C)))
        sums = np.zeros(C)
        tried = np.zeros(C)  # the samples' weights
        alive = np.arange(C)
        for r in range(rounds):
            hands, weight, others = deal(max(1, budget // (rounds * len(alive))))
            sums[alive] += weight @ rollouts(hands, others, cands[alive])
            tried[alive] += weight.sum()
            if r < rounds - 1:
                means = sums[alive] / tried[alive]
                keep = np.sort(np.argsort(-means, kind="stable")[: -(-len(alive) // 2)])
                alive = alive[keep]
        means = sums / tried
        return int(alive[int(np.argmax(means[alive]))]), means

    def _replies(self, hands, others, played, seat, table, table_seat, passes) -> np.ndarray:
        """The heuristic's play (0: pass) with weights ``others[i]`` at relative ``seat`` facing
        ``table``, for each row ``i`` of sampled ``hands``: what that seat would have done holding that hand."""
        eng, scores = self._engine(len(hands))
        eng.set_position(slice(None), hands, played, seat, table, table_seat, passes)
        choice = np.empty(len(hands), dtype=np.int64)
        c = self.ctx
        replies_state(choice, scores, eng.rules, eng.state, c.lookups, others)
        return choice

    def _rollout(self, hands, others, actions, played, table, table_seat, passes, opening) -> np.ndarray:
        """Payoff of seat 0 in each row after playing ``actions`` and the heuristic to the end, the
        other seats with weights ``others`` of the row (``rollout_state``, on ``threads``
        slices of the rows at once)."""
        rows = len(actions)
        eng, scores = self._engine(rows)
        eng.set_position(slice(None), hands, played, 0, table, table_seat, passes, opening)
        S = eng.state
        bad = int(kernels.check_actions(actions, S.over, S.legal, S.legal_n))
        if bad >= 0:  # cannot happen: the candidates are legal plays of the observed position
            raise ValueError(f"candidate play {int(actions[bad])} is not legal in the sampled position")
        payoff = np.empty(rows)
        c = self.ctx
        run_batched(
            rollout_state,
            eng.state,
            before=(eng.rules,),
            after=(c.lookups, c.weights, MAX_ROLLOUT_STEPS),
            rows=(actions, scores, payoff, np.ascontiguousarray(others)),
            threads=self.threads,
            min_rows=2,
        )
        return payoff


def _paired_z(diff: np.ndarray, diff2: np.ndarray, weights: float, weights2: float) -> np.ndarray:
    """Each candidate's mean paired difference over the favourite in standard errors, from the
    weighted sums of the differences (``diff``) and of their squares (``diff2``), the sum of the
    weights and of their squares (the effective sample size is ``weights**2 / weights2``). A
    difference that never varies counts as infinitely sure when positive, 0 otherwise.

    >>> _paired_z(np.array([0.0, 4.0, -2.0, 4.0]), np.array([0.0, 8.0, 4.0, 4.0]), 4.0, 4.0)
    array([ 0.        ,  1.73205081, -1.        ,         inf])
    """
    mean = diff / weights
    var = np.maximum(diff2 / weights - mean * mean, 0.0)
    n = weights * weights / weights2
    se = np.sqrt(var / max(n - 1.0, 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, mean / se, np.where(mean > 0, np.inf, 0.0))
    return z

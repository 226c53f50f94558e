"""Training configuration: one dataclass, read from ``bigtwo/configs/train/*.yaml``, overridable field by field.

Every hyperparameter of both trainers (PPO and Deep Monte-Carlo), the league, checkpoints and
evaluation is a field of ``TrainConfig`` below, declared in one place (``setting``): its default,
its range (or the values it allows) and its one-line description, with the reasons for a default
as a comment above it. A config file is a YAML mapping of some of these fields (the shipped ones
hold only what differs from the defaults); fields it leaves out take the defaults here. On the
command line, one scheme:

    bigtwo train --config ppo --set lr=1e-4 --set num_envs=128
    bigtwo train --set variant_settings="{players: 2, cards_per_player: 5}"

``--set FIELD=VALUE`` parses ``VALUE`` as YAML, then checks it like a file's value. An unknown
field, or a value of the wrong type or out of range, raises ``ValueError`` naming the field and
what is allowed (for an unknown field: every allowed field). Every numeric field has a range
(a ``Limit``; ``LIMITS``), wide enough for any real run and narrow enough that a typo
(``lr=1e30``) or a request no machine meets (``hidden_size=100000``) is refused before anything
starts; one rollout (``num_envs * num_steps``) is at most ``MAX_ROLLOUT`` steps. A text field with
a fixed set of values declares them (a ``Choice``; ``CHOICES``), one with a shape a ``Pattern``
(``device``, ``run_name``). The check, its error (``allowed: ppo, dmc``) and what
``bigtwo train --fields`` and the docs' fields table say a field allows all come from that one
declaration (``allowed_values``). Whether the device exists here is checked when the run starts
(``bigtwo.train.run.resolve_device``).

>>> cfg = load_config("default", ["lr=1e-4", "num_envs=128"])
>>> cfg.lr, cfg.num_envs
(0.0001, 128)
>>> load_config("default", ["learning_rate=1"])
Traceback (most recent call last):
...
ValueError: --set: unknown field 'learning_rate'; allowed fields: ...
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import time
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from bigtwo.env.checks import is_whole
from bigtwo.env.rules.settings import parse_settings
from bigtwo.env.rules.variant import DEFAULT_VARIANT, Variant, read_yaml_mapping

ALGOS = ("ppo", "dmc")
PRECISIONS = (
    "float32",
    "bfloat16",
    "auto",
)  # the arithmetic of a network's passes (bigtwo.train.networks.compute_dtype)
CRITICS = ("observation", "global")  # what PPO's value reads (bigtwo.train.networks.ActionScorer)
EXPERT_TARGETS = ("play", "search")  # what an expert round's policy learns (bigtwo.train.expert)


@dataclass(frozen=True)
class Limit:
    """The range a numeric field allows: ``low <= value <= high`` (``low < value`` when ``open_low``)."""

    low: float
    high: float
    open_low: bool = False

    def holds(self, value: float) -> bool:
        above = value > self.low if self.open_low else value >= self.low
        return above and value <= self.high

    def text(self, integer: bool) -> str:
        """``an integer in 1..65536`` or ``a number in (0, 1]``."""
        if integer:
            return f"an integer in {int(self.low):,}..{int(self.high):,}"
        return f"a number in {'(' if self.open_low else '['}{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Choice:
    """The values a text field allows, a fixed few: ``Choice(("ppo", "dmc"))``.

    >>> Choice(ALGOS).holds("dmc"), Choice(ALGOS).holds("a2c"), Choice(ALGOS).text()
    (True, False, 'ppo, dmc')
    """

    values: tuple[str, ...]

    def holds(self, value: str) -> bool:
        return value in self.values

    def text(self) -> str:
        return ", ".join(self.values)


@dataclass(frozen=True)
class Pattern:
    """The text a field allows when its values are too many to list: a regular expression (matched
    from the start; anchor its end) and the same in ``words``.

    >>> DEVICE.holds("cuda:1"), DEVICE.holds("gpu"), DEVICE.text()
    (True, False, 'auto, cpu, cuda or cuda:N')
    """

    regex: str
    words: str

    def holds(self, value: str) -> bool:
        return re.match(self.regex, value) is not None

    def text(self) -> str:
        return self.words


def setting(default: Any, allows: Limit | Choice | Pattern | str | None, doc: str) -> Any:
    """One ``TrainConfig`` field: its ``default``, what it ``allows`` and its one-line ``doc``, kept
    together (``bigtwo train --fields`` prints all three). ``allows`` is a numeric field's ``Limit``,
    a text field's ``Choice`` or ``Pattern`` (each checked by ``make_config``, and each says its own
    error and docs text), words for values checked when the run starts (agent specs, files), or
    ``None``: what its type allows. A list or mapping default is copied for each config."""
    meta = {"allows": allows, "doc": doc}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=meta)
    return field(default=default, metadata=meta)


# Every numeric field's range is wide enough for any real run and narrow enough that a value outside
# it is a typo (lr=1e30) or asks for more than a machine has (hidden_size=100000, torch_threads=100000).
BIG = 10**13  # environment steps: far more than any run
WEIGHT = Limit(0, 1e6)  # league weights and other non-negative factors
DEVICE = Pattern(r"^(auto|cpu|cuda|cuda:\d{1,3})$", "auto, cpu, cuda or cuda:N")
# a name, not a path: no '/', and neither '.' nor '..' (the folder itself, or the one above it)
FOLDER_NAME = Pattern(r"^(?!\.\.?\Z)[^/]*\Z", "a folder name without '/'")


@dataclass
class TrainConfig:
    """Every setting of a training run, each with its default, range and description; the shipped
    configs (``bigtwo/configs/train/*.yaml``) hold only what differs from these defaults."""

    # --- the run
    algo: str = setting(
        "ppo",
        Choice(ALGOS),
        "Trainer: ``ppo`` (policy gradient, self-play) or ``dmc`` (Deep Monte-Carlo, DouZero style).",
    )
    variant: str = setting(
        DEFAULT_VARIANT, None, "Rule variant: a name from ``bigtwo variants`` or a path to a variant YAML file."
    )
    variant_settings: dict = setting(
        {},
        "a mapping of variant fields, e.g. {players: 2, cards_per_player: 5}",
        "Variant fields overridden for this run, e.g. ``{players: 2, cards_per_player: 5}``.",
    )
    per_variant: dict = setting(
        {},
        "a mapping of variant names to fields, e.g. {hong-kong: {variant_settings: {scoring: collect}}}",
        "Fields for one variant only, used when ``variant`` is that name, e.g. "
        "``{hong-kong: {variant_settings: {scoring: collect}}}``; a ``--set`` of the same field wins.",
    )
    seed: int = setting(
        1, Limit(0, 2**63 - 1), "Seed of everything: deals, network initialisation, sampling, the league."
    )
    run_name: str = setting(
        "",
        FOLDER_NAME,
        "Run folder name under ``runs_dir``; empty: ``variant__algo__seed__time``. An existing run resumes.",
    )
    runs_dir: str = setting("runs", None, "Folder that holds the run folders.")
    device: str = setting(
        "auto",
        DEVICE,
        "Torch device: ``auto`` (CUDA when available, else CPU), ``cpu``, ``cuda``, ``cuda:1``...",
    )
    # 1, not 2: on 2 shared cores a second torch thread is 1.5x faster when the machine is idle but up
    # to 6x slower when other jobs compete (threads wait at every parallel op).
    torch_threads: int = setting(
        1, Limit(1, 256), "Threads torch may use on the CPU (keep at most the cores you have)."
    )
    deterministic: bool = setting(
        True, None, "Use torch's deterministic algorithms (same seed, same run, same machine: same result)."
    )
    total_timesteps: int = setting(
        12_000_000,
        Limit(0, BIG),
        "Environment steps to train for (one step = one decision in each of ``num_envs`` matches); 0: no "
        "self-play steps (only the warm start or the expert rounds).",
    )
    stop_at_timesteps: int = setting(
        0,
        Limit(0, BIG),
        "Stop at this step (checkpoint and final evaluation as at the end); ``total_timesteps`` still sets "
        "the learning-rate schedule. 0 = at ``total_timesteps``.",
    )
    # a safety net: an idle machine finishes the default 12M steps (4 PPO epochs) in ~4 minutes.
    time_limit_minutes: float = setting(
        16.0, Limit(0, 10**6), "Stop training (with a checkpoint) after this many minutes; 0 = no limit."
    )
    # large batches: the engine is cheap, the network's per-call overhead is not.
    num_envs: int = setting(
        512, Limit(1, 65_536), "Matches played at once (the batch of the vector env and of every forward pass)."
    )
    num_steps: int = setting(
        32, Limit(1, 4_096), "Vector-env steps per rollout: a rollout is ``num_envs * num_steps`` environment steps."
    )
    # the update on one core while the next rollout plays on the other: ~1.4x env-steps/s here
    # (docs/performance.md); each batch is then played by the weights from before the previous update
    overlap: bool = setting(
        False,
        None,
        "Train on each rollout while the next one plays, with the weights from before that update (one "
        "update behind; PPO's ratio is taken against the weights that played). Off: rollouts and updates "
        "alternate. Same seed, same run either way.",
    )
    # float32 by default: on this project's CPU (AVX-512 BF16) bfloat16 trains the default network no
    # faster, the strong config's 256-wide one 1.21x (docs/performance.md, "Training")
    precision: str = setting(
        "float32",
        Choice(PRECISIONS),
        "Arithmetic of the network's passes while training (acting and update): ``float32``; ``bfloat16`` "
        "(torch.autocast: the matmuls in bfloat16, the weights, optimizer and losses float32; fast on CPUs "
        "with AVX-512 BF16 or AMX and on GPUs with bf16, slower than float32 elsewhere); ``auto``: bfloat16 "
        "where the device has it, else float32. Exported networks play in float32.",
    )
    reward_scale: float = setting(
        0.0,
        Limit(0, 1e6),
        "Payoffs are multiplied by this for training; 0 = auto (1 / the largest loss of one game).",
    )

    # --- the network (bigtwo.train.networks)
    # small is enough here: 256 x 2 with a 2-layer scorer learned no better in the same time.
    hidden_size: int = setting(128, Limit(1, 4_096), "Width of the state encoder's layers.")
    state_layers: int = setting(2, Limit(1, 16), "Layers of the state encoder (an MLP over the observation).")
    pair_size: int = setting(64, Limit(1, 4_096), "Width of the (state, action) scorer, run once per legal play.")
    pair_layers: int = setting(1, Limit(1, 16), "Hidden layers of the (state, action) scorer.")
    # PerfectDou's lever: a critic that sees every hand while the policy sees only its seat's view
    critic: str = setting(
        "observation",
        Choice(CRITICS),
        "What PPO's value reads: ``observation`` (the seat's own view, through the policy's encoder) or "
        "``global`` (a separate critic network on the privileged ``global_state``, every hand; training "
        "only: the policy still sees only its observation, and plays without it).",
    )
    # an auxiliary task (the hidden-information games' belief heads): from its own view, the encoder also
    # learns which other seat holds each card it has not seen; the target is read off the global state
    hands_coef: float = setting(
        0.0,
        Limit(0, 1e6),
        "Weight of an auxiliary loss in PPO's update: a head on the policy's encoder predicts which other seat "
        "holds each card the seat has not seen (cross-entropy; the target from the privileged global state, "
        "recorded with each decision; training only: playing never reads the head); 0 = no such head.",
    )

    # a judge of what each play leaves: the hand after the play through a network of its own, shared by
    # every play (the one relu of the pair layer otherwise weighs a play's cards only linearly against the hand)
    hand_after: int = setting(
        0,
        Limit(0, 4_096),
        "Width of a network over the hand each legal play leaves (the seat's hand less the play's cards), "
        "added to the (state, action) scorer's input; 0 = none. Scores then take torch's ops rather than the "
        "fused CPU kernel (bigtwo.train.pair_scores).",
    )

    # --- optimisation
    # higher than CleanRL's 2.5e-4: the 0.01-scaled scorer output made 3e-4 learn slowly (approx_kl ~1e-5);
    # 1e-3 gives approx_kl ~3e-3. DMC keeps it too (DouZero: RMSprop 1e-4 on a far larger batch budget).
    lr: float = setting(1e-3, Limit(0, 1, open_low=True), "Adam learning rate.")
    anneal_lr: bool = setting(True, None, "Decay the learning rate linearly to 0 over ``total_timesteps``.")
    adam_eps: float = setting(1e-5, Limit(0, 1, open_low=True), "Adam epsilon.")
    max_grad_norm: float = setting(0.5, Limit(0, 1e6), "Clip the global gradient norm to this (0 = no clipping).")
    minibatch_size: int = setting(2048, Limit(1, 1_048_576), "Decisions per gradient step.")

    # --- PPO (used when algo: ppo)
    # 1: a seat's return is its payoff at the game's end; there is no reason to prefer quick wins.
    gamma: float = setting(
        1.0, Limit(0, 1), "Discount per decision of one seat (1: a seat's return is its game payoff)."
    )
    gae_lambda: float = setting(0.95, Limit(0, 1), "GAE lambda over each seat's own decision sequence.")
    update_epochs: int = setting(4, Limit(1, 100), "Passes over each rollout's decisions.")
    clip_coef: float = setting(0.2, Limit(0, 10, open_low=True), "PPO ratio clip.")
    clip_vloss: bool = setting(True, None, "Clip the value loss around the old values, as PPO2 does.")
    ent_coef: float = setting(0.01, Limit(0, 1e3), "Entropy bonus weight.")
    vf_coef: float = setting(0.5, Limit(0, 1e3), "Value loss weight.")
    norm_adv: bool = setting(True, None, "Normalise advantages per minibatch.")
    target_kl: float = setting(
        0.0, Limit(0, 1e3), "Stop a rollout's epochs early when the approximate KL passes this; 0 = never."
    )

    # --- Deep Monte-Carlo (used when algo: dmc)
    # DouZero uses 0.01 with many more steps; 0.05 explores more in a short run.
    epsilon: float = setting(
        0.05,
        Limit(0, 1),
        "DMC exploration: probability of a uniformly random legal play instead of the best-scored one.",
    )
    dmc_epochs: int = setting(1, Limit(1, 100), "DMC: passes over each batch of finished decisions.")
    dmc_lambda: float = setting(
        1.0,
        Limit(0, 1),
        "DMC targets: 1 = the Monte-Carlo return; below 1 the lambda-return, which mixes in the scores the "
        "seat's later decisions were played with (less noise, some bias).",
    )

    # --- the league (bigtwo.train.league)
    # pure self-play: adding past snapshots and baselines (0.6/0.2/0.2) did not help in 9 minutes.
    league_self: float = setting(
        1.0, WEIGHT, "Weight of matches where every seat is the current policy (all seats train)."
    )
    league_past: float = setting(
        0.0, WEIGHT, "Weight of matches against past snapshots of the policy (only the learner's seat trains)."
    )
    league_baselines: float = setting(
        0.0,
        WEIGHT,
        "Weight of matches against the baseline agents in ``baselines`` (only the learner's seat trains).",
    )
    baselines: list = setting(
        ["random", "greedy"],
        None,
        "Baseline agent names (``bigtwo.agents.make_agent``) for the league; one is drawn uniformly per match.",
    )
    snapshot_every: int = setting(
        1_000_000, Limit(1, BIG), "Add a snapshot of the policy to the league every this many environment steps."
    )
    max_snapshots: int = setting(8, Limit(0, 1_000), "Past snapshots kept in the league (the most recent ones).")
    snapshots_per_rollout: int = setting(
        0,
        Limit(0, 1_000),
        "Past snapshots a rollout's new matches draw from: that many of the kept ones, drawn afresh each "
        "rollout (each plays its own network pass at every step: fewer are quicker); 0 = every kept one.",
    )

    # --- advice (bigtwo.train.advice): a hand-written agent's choice as one more input per legal play
    advice: str = setting(
        "",
        "an agent spec, e.g. heuristic:weights=cards, or '' (none)",
        "The network sees which legal play this agent would make (one input per play); '' = none.",
    )

    # --- warm start (bigtwo.train.imitation): the network learns an agent's plays before self-play
    imitate: str = setting(
        "",
        "an agent spec, e.g. heuristic:weights=cards, or '' (none)",
        "Warm start: before RL the network imitates this agent's plays (and its returns as values); '' = none.",
    )
    imitate_decisions: int = setting(
        1_000_000, Limit(1, 10**9), "Warm start: decisions of the teacher (every seat) to learn from."
    )
    imitate_epochs: int = setting(
        3, Limit(1, 100), "Warm start and expert rounds: passes over the teacher's decisions."
    )
    init_from: str = setting(
        "",
        "'' (random weights), shipped, or a checkpoint / exported .pt file",
        "Start the network from these weights instead of random ones: ``shipped`` (the variant's shipped "
        "network) or a file. Its network fields must be this run's, or smaller: a wider network here "
        "(``hidden_size``, ``pair_size``, ``hand_after``) or one with parts the file lacks (``critic: global``, "
        "``hands_coef``) starts as the file's, playing as it did (``bigtwo.train.grow``).",
    )

    # --- expert iteration (bigtwo.train.expert): the search teaches the network it searches with
    expert: str = setting(
        "",
        "a lookahead spec without network, e.g. lookahead:samples=16,trust=1, or '' (none)",
        "Expert iteration: each round this search, searching with the network as trained so far, plays "
        "every seat and the network learns its plays and the games' payoffs; '' = none.",
    )
    expert_rounds: int = setting(0, Limit(0, 1_000), "Expert iteration: rounds before the self-play steps.")
    expert_decisions: int = setting(
        100_000, Limit(1, 10**9), "Expert iteration: the search's decisions (every seat) each round learns from."
    )
    expert_lr: float = setting(
        3e-4, Limit(0, 1, open_low=True), "Expert iteration: Adam learning rate of each round's learning."
    )
    expert_workers: int = setting(
        1,
        Limit(1, 64),
        "Expert iteration: processes that play each round's decisions, each its share on its own matches "
        "(the decisions depend on it; keep it at most the cores you have).",
    )
    expert_target: str = setting(
        "play",
        Choice(EXPERT_TARGETS),
        "Expert iteration: what the policy learns. ``play``: one play (cross-entropy), the search's best "
        "candidate among those that beat the favourite by more than ``expert_trust`` paired standard errors "
        "(the favourite when none does); ``search``: the network's own probabilities, with the mass of the "
        "searched candidates shared by a softmax of each one's paired z against the favourite over ``expert_tau``.",
    )
    expert_trust: float = setting(
        1.0,
        Limit(0, 100),
        "Expert iteration (``expert_target: play``): the paired z a candidate needs over the favourite for the "
        "network to learn it instead (at most the search's own ``trust`` adds nothing: the search's play).",
    )
    expert_tau: float = setting(
        1.0,
        Limit(0, 100, open_low=True),
        "Expert iteration (``expert_target: search``): the temperature of the candidates' softmax, in "
        "standard errors of the paired difference (smaller: the search's best takes more of the mass).",
    )

    # --- checkpoints, logs, evaluation
    checkpoint_every: int = setting(
        1_000_000,
        Limit(1, BIG),
        "Save a resumable checkpoint every this many environment steps (and at the end).",
    )
    keep_checkpoints: int = setting(
        3, Limit(0, 10**6), "Checkpoints kept in ``checkpoints/`` (older ones are deleted); 0 = keep all."
    )
    eval_every: int = setting(
        1_000_000,
        Limit(0, BIG),
        "Evaluate against ``eval_opponents`` every this many environment steps; 0 = never during training.",
    )
    eval_deals: int = setting(
        200, Limit(0, 10**6), "Deals per opponent in each periodic evaluation (each deal played once per seat)."
    )
    eval_opponents: list = setting(
        ["random", "greedy"], None, "Agents the periodic and final evaluations play against."
    )
    final_eval_deals: int = setting(500, Limit(0, 10**6), "Deals per opponent in the final evaluation (0 = skip it).")
    progress: bool = setting(True, None, "Show a tqdm progress bar.")

    # --- on a Ray cluster (bigtwo train --ray local|auto|ADDRESS; ignored without --ray)
    ray_actors: int = setting(
        2, Limit(1, 4_096), "Rollout actors with --ray; the num_envs matches are split evenly between them."
    )
    ray_actor_cpus: float = setting(
        1.0, Limit(0, 1_024, open_low=True), "CPUs the cluster reserves for each rollout actor (--ray)."
    )

    @property
    def stop_step(self) -> int:
        """The step the run stops at: ``stop_at_timesteps`` when set (and sooner), else ``total_timesteps``."""
        if 0 < self.stop_at_timesteps < self.total_timesteps:
            return self.stop_at_timesteps
        return self.total_timesteps

    def resolved_run_name(self) -> str:
        """``run_name`` or ``variant__algo__seed__time``."""
        if self.run_name:
            return self.run_name
        stem = Path(self.variant).stem if self.variant.endswith((".yaml", ".yml")) else self.variant
        return f"{stem}__{self.algo}__{self.seed}__{int(time.time())}"

    def resolved_reward_scale(self, variant: Variant) -> float:
        """``reward_scale``, or (0 = auto) 1 / the most one seat can lose in one game of ``variant``
        (``Variant.worst_payoff``)."""
        if self.reward_scale > 0:
            return self.reward_scale
        return 1.0 / -variant.worst_payoff

    def to_dict(self) -> dict[str, Any]:
        """Plain YAML-ready fields."""
        return dataclasses.asdict(self)


FIELDS: dict[str, dataclasses.Field] = {f.name: f for f in dataclasses.fields(TrainConfig)}
_HINTS = typing.get_type_hints(TrainConfig)
LIMITS: dict[str, Limit] = {
    n: f.metadata["allows"] for n, f in FIELDS.items() if isinstance(f.metadata["allows"], Limit)
}
"""Every numeric field's range (from its ``setting``)."""
CHOICES: dict[str, Choice] = {
    n: f.metadata["allows"] for n, f in FIELDS.items() if isinstance(f.metadata["allows"], Choice)
}
"""Every text field with a fixed set of values, and its values (from its ``setting``)."""
MAX_ROLLOUT = 1_048_576  # num_envs * num_steps: the decisions (and observations) one rollout holds


def defaults() -> dict[str, Any]:
    """Every field's default, by name (a fresh copy of each list and mapping)."""
    return TrainConfig().to_dict()


def field_docs() -> dict[str, str]:
    """One-line description of every field (from its ``setting``)."""
    return {name: f.metadata["doc"] for name, f in FIELDS.items()}


def _allowed() -> str:
    return ", ".join(FIELDS)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def allowed_values(name: str) -> str:
    """What field ``name`` allows, in words (``bigtwo train --fields`` and the errors show it)."""
    hint, allows = _HINTS[name], FIELDS[name].metadata["allows"]
    if isinstance(allows, Limit):
        return allows.text(integer=hint is int)
    if isinstance(allows, (Choice, Pattern)):
        return allows.text()
    if allows:
        return allows
    return {bool: "true or false", str: "text", list: "a list of agent names, e.g. [random, greedy]"}.get(hint, "")


def _check(source: str, name: str, value: Any) -> Any:
    """``value`` as the field's type, range-checked; ``ValueError`` naming the field otherwise."""
    if name not in FIELDS:
        raise ValueError(f"{source}: unknown field {name!r}; allowed fields: {_allowed()}")
    hint = _HINTS[name]

    def fail(allowed: str | None = None) -> ValueError:
        return ValueError(
            f"{source}: field {name!r} has bad value {value!r}; allowed: {allowed or allowed_values(name)}"
        )

    if hint is bool:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if not isinstance(value, bool):
            raise fail()
        return value
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        number = _number(value) if isinstance(value, str) else None
        if number is not None and number.is_integer():
            value = int(number)  # "2e6" from the command line
        if not is_whole(value) or not LIMITS[name].holds(int(value)):
            raise fail()
        return int(value)
    if hint is float:
        if isinstance(value, str):
            if _number(value) is None:
                raise fail()
            value = _number(value)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise fail()
        value = float(value)
        if not LIMITS[name].holds(value):
            raise fail()
        return value
    if hint is str:
        if not isinstance(value, str):
            raise fail("text")
        allows = FIELDS[name].metadata["allows"]
        if isinstance(allows, (Choice, Pattern)) and not allows.holds(value):
            raise fail()
        return value
    if hint is list:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
            raise fail()
        return list(value)
    if hint is dict:
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise fail()
        if name == "per_variant":
            return {str(v): _per_variant_fields(source, v, fields) for v, fields in value.items()}
        return dict(value)
    raise AssertionError(name)  # pragma: no cover - every field type is handled above


def config_dir() -> Path:
    """Folder of the shipped training configs: ``bigtwo/configs/train``, in the installed package too."""
    return Path(str(resources.files("bigtwo.configs") / "train"))


def config_names() -> list[str]:
    """Names of the shipped training configs."""
    return sorted(p.stem for p in config_dir().glob("*.yaml"))


def _read(name_or_path: str | Path) -> tuple[dict[str, Any], str]:
    text = str(name_or_path)
    path = config_dir() / f"{text}.yaml" if text in config_names() else Path(text)
    if not path.is_file():
        raise ValueError(f"unknown training config {text!r}; allowed: {', '.join(config_names())} or a YAML file")
    return read_yaml_mapping(path), str(path)


def _per_variant_fields(source: str, variant: Any, fields: Any) -> dict[str, Any]:
    """One ``per_variant`` entry, every field checked like a file's (``variant`` and
    ``per_variant`` themselves cannot be set there)."""
    where = f"{source}: field 'per_variant', entry {variant!r}"
    if not isinstance(variant, str) or not variant:
        raise ValueError(f"{source}: field 'per_variant' has key {variant!r}; allowed: variant names")
    if not isinstance(fields, Mapping):
        raise ValueError(f"{where} is {fields!r}; allowed: a mapping of fields, e.g. {{stop_at_timesteps: 1000000}}")
    out = {}
    for name, value in fields.items():
        if name in ("variant", "per_variant"):
            raise ValueError(f"{where}: field {name!r} cannot be set per variant; allowed: any other field")
        out[str(name)] = _check(where, str(name), value)
    return out


def make_config(data: Mapping[str, Any], source: str = "config", base: TrainConfig | None = None) -> TrainConfig:
    """A checked ``TrainConfig`` from ``data`` on top of ``base`` (default: the dataclass defaults)."""
    values = base.to_dict() if base is not None else {}
    for name, value in data.items():
        values[name] = _check(source, str(name), value)
    cfg = TrainConfig(**values)
    if cfg.num_envs * cfg.num_steps > MAX_ROLLOUT:
        raise ValueError(
            f"{source}: num_envs * num_steps (one rollout) is {cfg.num_envs * cfg.num_steps:,}; allowed: at most "
            f"{MAX_ROLLOUT:,} (num_envs {cfg.num_envs}, num_steps {cfg.num_steps})"
        )
    if cfg.ray_actors > cfg.num_envs:
        raise ValueError(
            f"{source}: field 'ray_actors' is {cfg.ray_actors}, more than num_envs ({cfg.num_envs}); "
            "allowed: at most one actor per match"
        )
    if cfg.league_self + cfg.league_past + cfg.league_baselines <= 0:
        raise ValueError(f"{source}: league_self + league_past + league_baselines must be > 0")
    if cfg.league_baselines > 0 and not cfg.baselines:
        raise ValueError(f"{source}: field 'baselines' is empty but league_baselines > 0")
    if cfg.critic == "global" and (cfg.algo != "ppo" or cfg.imitate):
        why = "algo dmc has no value head" if cfg.algo != "ppo" else "the warm start (imitate) trains the value"
        raise ValueError(
            f"{source}: field 'critic' is 'global' but {why} on observations; allowed: critic global with algo ppo "
            "and no imitate, else critic observation"
        )
    if cfg.hands_coef > 0 and cfg.algo != "ppo":
        raise ValueError(
            f"{source}: field 'hands_coef' is {cfg.hands_coef} but algo {cfg.algo} has no auxiliary losses; "
            "allowed: hands_coef > 0 with algo ppo, else 0"
        )
    if cfg.init_from and cfg.imitate:
        raise ValueError(
            f"{source}: field 'init_from' is set together with 'imitate', and the warm start would overwrite the "
            "weights started from; allowed: one of them"
        )
    if cfg.expert_rounds > 0 and not cfg.expert:
        raise ValueError(
            f"{source}: field 'expert_rounds' is {cfg.expert_rounds} but 'expert' is empty; "
            "allowed: an expert search, e.g. lookahead:samples=16,trust=1"
        )
    if cfg.expert and (cfg.algo != "ppo" or cfg.critic != "observation"):
        raise ValueError(
            f"{source}: field 'expert' is set but the search needs a policy and a value of the observation; "
            "allowed: expert with algo ppo and critic observation"
        )
    return cfg


def load_config(
    name_or_path: str | Path = "default",
    overrides: Iterable[str] | Mapping[str, Any] = (),
    base: TrainConfig | None = None,
    sources: dict[str, str] | None = None,
) -> TrainConfig:
    """The config file ``name_or_path`` (a shipped name or a path) with ``overrides`` applied
    (``FIELD=VALUE`` strings or a mapping), then the file's ``per_variant`` fields for the chosen
    variant, except those the overrides set. With ``base`` (e.g. a resumed run's config) the file
    is skipped and the overrides apply to ``base``. ``sources``, when given, is filled with where
    each field's value came from: ``default`` (the built-in default), the file's path, ``--set``,
    ``PATH per_variant.VARIANT``, or ``base`` (what ``base`` held).

    >>> cfg = load_config("strong", ["variant=hong-kong"])
    >>> cfg.variant_settings, cfg.stop_at_timesteps
    ({'scoring': 'collect'}, 37158912)
    >>> load_config("strong", ["variant=hong-kong", "stop_at_timesteps=1000"]).stop_at_timesteps
    1000
    """
    found = dict.fromkeys(FIELDS, "default" if base is None else "base")
    if base is None:
        data, source = _read(name_or_path)
        cfg = make_config(data, source)
        found.update(dict.fromkeys(map(str, data), source))
    else:
        cfg = base
    if isinstance(overrides, Mapping):
        extra = dict(overrides)
    else:
        extra = parse_settings(overrides, form="FIELD=VALUE", hint=f"; allowed fields: {_allowed()}")
    if extra:
        cfg = make_config(extra, "--set", base=cfg)
        found.update(dict.fromkeys(map(str, extra), "--set"))
    if base is None:  # a resumed run's config already holds its variant's fields
        chosen = {k: v for k, v in cfg.per_variant.get(cfg.variant, {}).items() if k not in extra}
        if chosen:
            cfg = make_config(chosen, f"per_variant.{cfg.variant}", base=cfg)
            found.update(dict.fromkeys(chosen, f"{source} per_variant.{cfg.variant}"))
    if sources is not None:
        sources.update(found)
    return cfg


def to_yaml(cfg: TrainConfig, header: str = "") -> str:
    """``cfg`` as a YAML file with every field's description as a comment above it."""
    docs = field_docs()
    lines = [f"# {line}".rstrip() for line in header.splitlines()] if header else []
    for name, value in cfg.to_dict().items():
        lines.append(f"# {docs.get(name, '')}")
        text = yaml.safe_dump({name: value}, default_flow_style=True, width=1000).strip()
        lines.append(text[1:-1] if text.startswith("{") else text)
    return "\n".join(lines) + "\n"

"""PPO self-play on the vector env: one network for every seat, trained on each seat's own decisions.

Reads top to bottom, CleanRL style: set-up (run folder, env, network, league, resume), then per
update a rollout, advantages, PPO epochs, logs, snapshots, evaluation and checkpoints; at the
end a final checkpoint and a duplicate-tournament evaluation against ``eval_opponents``.

- **Acting.** Each step, every slot's seat to act is either the learner (all seats in self-play
  slots; the learner's one seat against league opponents) or an opponent agent. The learner's
  rows go through the network in one batch: it scores only their legal plays
  (``train.networks``), the padding is ``-inf`` before the softmax, and a play is sampled.
- **Trajectories.** ``DecisionStore`` links each decision to the same seat's next decision in
  the same slot, and credits every seat the payoff it receives when its game ends (on whatever
  step that is). GAE runs along these per-seat chains: a decision's next value is its seat's
  next decision's value; the last decision of an episode (a match: SAME_STEP autoreset starts a
  new one in the step that ended it, and the chains are cut there) bootstraps from nothing.
  A decision whose seat has not acted again before the rollout ends is carried to the next
  rollout, where it finishes (the usual bootstrap from a rollout's last state, per seat).
- **Loss.** Clipped surrogate + (clipped) value loss - entropy bonus, as in PPO2/CleanRL.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from bigtwo_env.variant import load_variant
from bigtwo_env.vector import VectorEnv

from .checkpoint import tensors_to_arrays
from .config import TrainConfig
from .league import League
from .networks import ActionScorer, action_features, legal_mask, masked_log_softmax
from .policy_agent import PolicyAgent
from .runner import (
    Episodes,
    Run,
    View,
    env_state,
    final_report,
    load_env_state,
    load_rng_state,
    reward_scale,
    rng_state,
    view,
)
from .storage import DecisionStore, gae


@dataclass
class RunResult:
    """What a finished (or time-limited) run reports."""

    run_dir: Path
    checkpoint: Path
    global_step: int
    seconds: float
    steps_per_second: float
    evaluations: dict = field(default_factory=dict)


def train(cfg: TrainConfig) -> RunResult:
    # ------------------------------------------------------------------ set-up
    variant = load_variant(cfg.variant, **cfg.variant_settings)
    run = Run(cfg, variant)  # run folder, TensorBoard, seeds, threads, determinism
    device = run.device
    scale = reward_scale(cfg, variant)
    venv = VectorEnv(variant, num_envs=cfg.num_envs, seed=cfg.seed)
    n_envs, players = cfg.num_envs, variant.players
    net = ActionScorer(
        venv.obs_size, action_features(variant), cfg.hidden_size, cfg.state_layers, cfg.pair_size, cfg.pair_layers
    ).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=cfg.adam_eps)
    league = League(
        variant,
        n_envs,
        (cfg.league_self, cfg.league_past, cfg.league_baselines),
        cfg.baselines,
        cfg.max_snapshots,
        cfg.seed,
        snapshot_mode="sample",
        device=str(device),
        root=run.dir,
    )
    store = DecisionStore(n_envs, players, venv.obs_size, capacity=n_envs * (cfg.num_steps + players))
    sampler = torch.Generator(device=device).manual_seed(cfg.seed)  # the learner's action sampling
    shuffle = np.random.default_rng([cfg.seed, 2])  # minibatch order
    episodes = Episodes(n_envs)
    global_step, update = 0, 0

    saved = run.load_resume()
    if saved is not None:
        net.load_state_dict(saved["model"]["state_dict"])
        res = saved["resume"]
        optimizer.load_state_dict(res["optimizer"])
        load_env_state(venv, tensors_to_arrays(res["env"]))
        store.load_state_dict(tensors_to_arrays(res["store"]))
        league.load_state_dict(res["league"])
        load_rng_state(res["rng"], sampler=sampler, shuffle=shuffle)
        episodes.length[:] = res["episode_length"].numpy()
        global_step, update = int(saved["global_step"]), int(saved["update"])

    def checkpoint_payload() -> dict:
        return run.payload("ppo", net, global_step, update)

    def save_checkpoint() -> Path:
        resume = {
            "optimizer": optimizer.state_dict(),
            "env": env_state(venv),
            "store": store.state_dict(),
            "league": league.state_dict(),
            "rng": rng_state(sampler=sampler, shuffle=shuffle),
            "episode_length": episodes.length,
        }
        return run.save(checkpoint_payload(), resume)

    def next_multiple(every: int) -> int:
        return (global_step // every + 1) * every if every > 0 else math.inf

    next_checkpoint = next_multiple(cfg.checkpoint_every)
    next_eval = next_multiple(cfg.eval_every)
    next_snapshot = next_multiple(cfg.snapshot_every) if cfg.league_past > 0 else math.inf
    last_checkpoint = run.resume_from
    v: View = view(venv)
    run.progress(global_step)
    start_time, start_step = time.time(), global_step

    # ------------------------------------------------------------------ training loop
    while global_step < cfg.total_timesteps and not run.out_of_time():
        update += 1
        lr = cfg.lr * (1.0 - global_step / cfg.total_timesteps) if cfg.anneal_lr else cfg.lr
        for group in optimizer.param_groups:
            group["lr"] = lr

        # 1. rollout: num_steps vector steps, the learner's decisions recorded per (slot, seat)
        t0 = time.time()
        net.eval()
        for _ in range(cfg.num_steps):
            learner = league.learner_rows(v.seat)
            rows = np.flatnonzero(learner & (v.counts > 1))  # a single legal play is no decision
            actions = v.legal[:, 0].astype(np.int64)  # that single play, where there is one
            if rows.size:
                legal, counts = v.legal[rows], v.counts[rows]
                with torch.no_grad():
                    scores, value = net(
                        torch.as_tensor(v.obs[rows], device=device),
                        torch.as_tensor(legal.astype(np.int64), device=device),
                        torch.as_tensor(counts.astype(np.int64), device=device),
                    )
                    logp_all = torch.log_softmax(scores, dim=1)  # padding is -inf: probability 0
                    pick = torch.multinomial(logp_all.exp(), 1, generator=sampler)
                    logp = logp_all.gather(1, pick).squeeze(1)
                pick = pick.squeeze(1).cpu().numpy()
                actions[rows] = legal[np.arange(rows.size), pick]
                store.record(
                    rows, v.seat[rows], v.obs[rows], legal, counts, pick, logp.cpu().numpy(), value.cpu().numpy()
                )
            for agent, opp_rows in league.opponent_groups(learner):
                actions[opp_rows] = agent.act(v.obs[opp_rows], v.legal[opp_rows], v.counts[opp_rows])
            obs, rewards, ended, _, info = venv.step(actions)
            store.credit(rewards * scale, ended)  # each seat's payoff to its pending decision
            episodes.step(rewards, info["game_over"], info["winner"], league)
            league.draw(np.flatnonzero(ended))  # new matches: new opponents
            v = View(obs, info["seat"], info["legal_ids"], info["legal_counts"])
            global_step += n_envs
        rollout_seconds = time.time() - t0

        # 2. advantages along each seat's decision chain
        n = store.size
        advantages, returns, finished = gae(
            store.reward[:n], store.done[:n], store.next[:n], store.value[:n], cfg.gamma, cfg.gae_lambda
        )
        train_idx = np.flatnonzero(finished)

        # 3. PPO epochs over the finished decisions
        t0 = time.time()
        net.train()
        stats: dict[str, list[float]] = {k: [] for k in ("policy", "value", "entropy", "approx_kl", "clipfrac")}
        for _epoch in range(cfg.update_epochs):
            order = shuffle.permutation(train_idx)
            for start in range(0, len(order), cfg.minibatch_size):
                idx = order[start : start + cfg.minibatch_size]
                b = store.batch(idx)
                counts = torch.as_tensor(b["counts"].astype(np.int64), device=device)
                scores, new_value = net(
                    torch.as_tensor(b["obs"], device=device),
                    torch.as_tensor(b["legal"].astype(np.int64), device=device),
                    counts,
                )
                valid = legal_mask(counts, scores.shape[1])
                logp_all = masked_log_softmax(scores, valid)
                pick = torch.as_tensor(b["pick"].astype(np.int64), device=device)
                new_logp = logp_all.gather(1, pick[:, None]).squeeze(1)
                entropy = -(logp_all.exp() * logp_all).sum(1)
                log_ratio = new_logp - torch.as_tensor(b["logprob"], device=device)
                ratio = log_ratio.exp()
                with torch.no_grad():
                    stats["approx_kl"].append(((ratio - 1) - log_ratio).mean().item())
                    stats["clipfrac"].append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())

                mb_adv = torch.as_tensor(advantages[idx], device=device)
                if cfg.norm_adv and len(idx) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - cfg.clip_coef, 1 + cfg.clip_coef)
                ).mean()

                mb_ret = torch.as_tensor(returns[idx], device=device)
                old_value = torch.as_tensor(b["value"], device=device)
                if cfg.clip_vloss:
                    clipped = old_value + torch.clamp(new_value - old_value, -cfg.clip_coef, cfg.clip_coef)
                    v_loss = 0.5 * torch.max((new_value - mb_ret) ** 2, (clipped - mb_ret) ** 2).mean()
                else:
                    v_loss = 0.5 * ((new_value - mb_ret) ** 2).mean()
                ent = entropy.mean()
                loss = pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss

                optimizer.zero_grad()
                loss.backward()
                if cfg.max_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                optimizer.step()
                stats["policy"].append(pg_loss.item())
                stats["value"].append(v_loss.item())
                stats["entropy"].append(ent.item())
            if cfg.target_kl > 0 and stats["approx_kl"] and np.mean(stats["approx_kl"][-4:]) > cfg.target_kl:
                break
        store.compact(~finished)  # unfinished decisions wait for their seat's next one
        update_seconds = time.time() - t0

        # 4. logs
        sps = (global_step - start_step) / max(time.time() - start_time, 1e-9)
        scalars = {f"losses/{k}": float(np.mean(x)) for k, x in stats.items() if x}
        y_pred, y_true = store_value_pairs(advantages, returns, train_idx)
        scalars.update(
            {
                "charts/learning_rate": lr,
                "charts/sps": sps,
                "charts/decisions_trained": float(len(train_idx)),
                "charts/rollout_seconds": rollout_seconds,
                "charts/update_seconds": update_seconds,
                "losses/explained_variance": explained_variance(y_pred, y_true),
            }
        )
        scalars.update(episodes.scalars())
        episodes.reset()
        run.log(scalars, global_step)
        run.advance(n_envs * cfg.num_steps, {"sps": f"{sps:,.0f}", "kl": f"{scalars.get('losses/approx_kl', 0):.4f}"})

        # 5. league snapshots, evaluation, checkpoints
        if global_step >= next_snapshot:
            league.add_snapshot(global_step, run.snapshot(checkpoint_payload()))
            next_snapshot = next_multiple(cfg.snapshot_every)
        if global_step >= next_eval:
            agent = PolicyAgent(variant, copy.deepcopy(net), seed=cfg.seed, mode="greedy", device=device)
            evals = run.evaluate(agent, global_step, cfg.eval_deals)
            if evals:
                run.say(
                    f"step {global_step:,}: "
                    + ", ".join(
                        f"vs {k} {e.mean_payoff:+.2f} [{e.ci_low:+.2f}, {e.ci_high:+.2f}] (them {e.opponent_mean_payoff:+.2f})"
                        for k, e in evals.items()
                    )
                )
            next_eval = next_multiple(cfg.eval_every)
        if global_step >= next_checkpoint:
            last_checkpoint = save_checkpoint()
            next_checkpoint = next_multiple(cfg.checkpoint_every)

    # ------------------------------------------------------------------ the end
    seconds = time.time() - start_time
    sps = (global_step - start_step) / max(seconds, 1e-9)
    if last_checkpoint is None or not str(last_checkpoint).endswith(f"step_{global_step:012d}.pt"):
        last_checkpoint = save_checkpoint()
    if run.bar is not None:
        run.bar.close()
    agent = PolicyAgent(variant, copy.deepcopy(net), seed=cfg.seed, mode="greedy", device=device)
    evals = final_report(run, "ppo", agent, last_checkpoint, global_step, global_step - start_step, seconds, sps)
    run.close()
    return RunResult(run.dir, last_checkpoint, global_step, seconds, sps, evals)


def store_value_pairs(advantages: np.ndarray, returns: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Old values (returns - advantages) and returns of the trained decisions."""
    return returns[idx] - advantages[idx], returns[idx]


def explained_variance(y_pred: np.ndarray, y_true: np.ndarray) -> float:
    """1 - Var(y_true - y_pred) / Var(y_true) (nan when y_true is constant)."""
    var = np.var(y_true)
    return float("nan") if var == 0 else float(1 - np.var(y_true - y_pred) / var)

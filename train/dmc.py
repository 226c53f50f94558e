"""Deep Monte-Carlo self-play (DouZero style): a Q network over (state, legal play) pairs.

Reads top to bottom like ``train.ppo``, which it mirrors: set-up, then per update a rollout,
Monte-Carlo targets, regression epochs, logs, snapshots, evaluation and checkpoints; at the end
a final checkpoint and a duplicate-tournament evaluation.

- **Acting.** The learner scores each legal play of its decisions with ``Q(state, play)`` (the
  ``ActionScorer``'s scores: only legal plays are ever scored) and plays the best one, or with
  probability ``epsilon`` a uniformly random legal play. A single legal play is no decision and
  is not recorded.
- **Targets.** A decision's target is the return its seat gets from it to the end of the episode
  (undiscounted: the seat's game payoff, scaled by ``reward_scale``): the decisions of a seat
  are linked in the ``DecisionStore`` as for PPO, and only decisions whose episode has ended
  are trained on; the others wait in the store for later rollouts.
- **Loss.** Mean squared error between ``Q(state, played)`` and the target, computed on the
  played action alone (one scored pair per decision), ``dmc_epochs`` passes per batch.
"""

from __future__ import annotations

import copy
import math
import time

import numpy as np
import torch

from bigtwo_env.variant import load_variant
from bigtwo_env.vector import VectorEnv

from .checkpoint import tensors_to_arrays
from .config import TrainConfig
from .league import League
from .networks import ActionScorer, action_features
from .policy_agent import PolicyAgent
from .ppo import RunResult
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
from .storage import DecisionStore, mc_returns


def train(cfg: TrainConfig) -> RunResult:
    # ------------------------------------------------------------------ set-up
    variant = load_variant(cfg.variant, **cfg.variant_settings)
    run = Run(cfg, variant)  # run folder, TensorBoard, seeds, threads, determinism
    device = run.device
    scale = reward_scale(cfg, variant)
    venv = VectorEnv(variant, num_envs=cfg.num_envs, seed=cfg.seed)
    n_envs, players = cfg.num_envs, variant.players
    net = ActionScorer(
        venv.obs_size,
        action_features(variant),
        cfg.hidden_size,
        cfg.state_layers,
        cfg.pair_size,
        cfg.pair_layers,
        score_std=1.0,
    ).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=cfg.adam_eps)
    league = League(
        variant,
        n_envs,
        (cfg.league_self, cfg.league_past, cfg.league_baselines),
        cfg.baselines,
        cfg.max_snapshots,
        cfg.seed,
        snapshot_mode="greedy",
        device=str(device),
        root=run.dir,
    )
    store = DecisionStore(n_envs, players, venv.obs_size, capacity=n_envs * (cfg.num_steps + 16 * players))
    explore = np.random.default_rng([cfg.seed, 3])  # epsilon-greedy draws
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
        load_rng_state(res["rng"], explore=explore, shuffle=shuffle)
        episodes.length[:] = res["episode_length"].numpy()
        global_step, update = int(saved["global_step"]), int(saved["update"])

    def checkpoint_payload() -> dict:
        return run.payload("dmc", net, global_step, update)

    def save_checkpoint():
        resume = {
            "optimizer": optimizer.state_dict(),
            "env": env_state(venv),
            "store": store.state_dict(),
            "league": league.state_dict(),
            "rng": rng_state(explore=explore, shuffle=shuffle),
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

        # 1. rollout: epsilon-greedy on Q over the legal plays; the learner's decisions recorded
        t0 = time.time()
        net.eval()
        for _ in range(cfg.num_steps):
            learner = league.learner_rows(v.seat)
            rows = np.flatnonzero(learner & (v.counts > 1))  # a single legal play is no decision
            actions = v.legal[:, 0].astype(np.int64)  # that single play, where there is one
            if rows.size:
                legal, counts = v.legal[rows], v.counts[rows]
                with torch.no_grad():
                    q, _ = net(
                        torch.as_tensor(v.obs[rows], device=device),
                        torch.as_tensor(legal.astype(np.int64), device=device),
                        torch.as_tensor(counts.astype(np.int64), device=device),
                    )
                pick = q.argmax(dim=1).cpu().numpy()
                random_pick = (explore.random(rows.size) * counts).astype(np.int64)
                pick = np.where(explore.random(rows.size) < cfg.epsilon, random_pick, pick)
                actions[rows] = legal[np.arange(rows.size), pick]
                q_pick = q[torch.arange(rows.size), torch.as_tensor(pick, device=device)].cpu().numpy()
                store.record(
                    rows, v.seat[rows], v.obs[rows], legal, counts, pick, np.zeros(rows.size, np.float32), q_pick
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

        # 2. Monte-Carlo targets: each decision's return to its episode's end
        n = store.size
        returns, finished = mc_returns(store.reward[:n], store.done[:n], store.next[:n])
        train_idx = np.flatnonzero(finished)

        # 3. regression of Q(state, played) on the return
        t0 = time.time()
        net.train()
        losses: list[float] = []
        q_means: list[float] = []
        for _epoch in range(cfg.dmc_epochs):
            order = shuffle.permutation(train_idx)
            for start in range(0, len(order), cfg.minibatch_size):
                idx = order[start : start + cfg.minibatch_size]
                played = store.played(idx)[:, None]  # score the played pair only
                q, _ = net(
                    torch.as_tensor(store.obs[idx], device=device),
                    torch.as_tensor(played, device=device),
                    torch.ones(len(idx), dtype=torch.int64, device=device),
                )
                target = torch.as_tensor(returns[idx], device=device)
                loss = ((q.squeeze(1) - target) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                if cfg.max_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                optimizer.step()
                losses.append(loss.item())
                q_means.append(q.mean().item())
        store.compact(~finished)  # decisions of unfinished episodes wait for their return
        update_seconds = time.time() - t0

        # 4. logs
        sps = (global_step - start_step) / max(time.time() - start_time, 1e-9)
        scalars = {
            "charts/learning_rate": lr,
            "charts/sps": sps,
            "charts/decisions_trained": float(len(train_idx)),
            "charts/decisions_waiting": float(store.size),
            "charts/rollout_seconds": rollout_seconds,
            "charts/update_seconds": update_seconds,
        }
        if losses:
            scalars.update(
                {
                    "losses/value": float(np.mean(losses)),
                    "losses/q_mean": float(np.mean(q_means)),
                    "losses/target_mean": float(returns[train_idx].mean()),
                }
            )
        scalars.update(episodes.scalars())
        episodes.reset()
        run.log(scalars, global_step)
        run.advance(n_envs * cfg.num_steps, {"sps": f"{sps:,.0f}", "loss": f"{scalars.get('losses/value', 0):.4f}"})

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
    evals = final_report(run, "dmc", agent, last_checkpoint, global_step, global_step - start_step, seconds, sps)
    run.close()
    return RunResult(run.dir, last_checkpoint, global_step, seconds, sps, evals)

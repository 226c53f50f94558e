"""Start a bigger network from a smaller one's weights, playing exactly as the smaller one did.

``init_from`` (``TrainConfig.init_from``) names a trained network; when the run's network is the
same shape, its weights load as they are. When the run's network is *larger* (``hidden_size``,
``pair_size`` or ``hand_after`` wider, or parts the source lacks: ``critic: global``'s critic,
``hands_coef``'s hands head, ``hand_after``'s network), ``grow`` copies the source into it so that
the policy's scores are unchanged (net2net's function-preserving widening, Chen et al. 2016):

- every weight keeps the source's values in its leading block (``W[:out, :in]``);
- the weights from a new unit into an old one are 0 (``W[:out, in:]``), so old units compute what
  they did;
- a new unit's own weights and bias keep their fresh initialisation, so it computes something of
  its own, and its output reaches the scores only through weights that start at 0 and learn;
- a new part the scores read (``hand_after``'s network, added to the pair layer) starts with its
  last layer at 0; a new part they do not read (a critic, the hands head) keeps its initialisation.

What cannot grow is refused: a smaller size, another ``state_layers`` / ``pair_layers`` count,
other advice, another observation size or another trainer's output scale (``score_std``: a PPO
network's logits are not DMC's values). The source's value head is dropped when the run's critic
is a network of its own (``critic: global``: its layers are named apart), which learns from its
initialisation.

>>> import torch
>>> from bigtwo.train.networks import ActionScorer, action_features
>>> from bigtwo.env import load_variant
>>> feats = action_features(load_variant("taiwan"))
>>> small, big = ActionScorer(402, feats, 32, 2, 16), ActionScorer(402, feats, 48, 2, 24)
>>> said = grow(small.state_dict(), small.kwargs, big)
>>> obs, legal, counts = torch.rand(3, 402), torch.tensor([[0, 5], [7, 9], [3, 0]]), torch.tensor([2, 2, 1])
>>> bool(torch.allclose(small(obs, legal, counts)[0], big(obs, legal, counts)[0], atol=1e-5)), said
(True, 'hidden_size 32 -> 48, pair_size 16 -> 24')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from bigtwo.train.networks import ActionScorer

# the kwargs that may be larger here; every other must match
GROWS = ("hidden_size", "pair_size", "hand_after", "critic_size", "hand_places")


def grow_plan(theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> str:
    """What growing a network of kwargs ``theirs`` into one of ``ours`` changes, one phrase (``''``:
    the same network); ``ValueError`` naming each kwarg that cannot grow."""
    wrong, grown = [], []
    for key in sorted(set(theirs) | set(ours)):
        a, b = theirs.get(key, 0 if key in GROWS else None), ours.get(key, 0 if key in GROWS else None)
        if a == b:
            continue
        if key in GROWS and isinstance(a, int) and isinstance(b, int) and a < b:
            grown.append(f"{key} {a} -> {b}")
        else:
            allowed = "a larger value" if key in GROWS else "the same value"
            wrong.append(f"{key}: {a!r} there, {b!r} here (allowed: {allowed})")
    if wrong:
        raise ValueError("cannot grow: " + "; ".join(wrong))
    return ", ".join(grown)


def grow(source: Mapping[str, torch.Tensor], source_kwargs: Mapping[str, Any], net: ActionScorer) -> str:
    """Load ``source`` (a state dict of a network with ``source_kwargs``) into the larger ``net`` so
    that its scores are unchanged (the module docstring); returns what grew (``grow_plan``)."""
    said = grow_plan(source_kwargs, net.kwargs)
    after_new = net.hand_after and not source_kwargs.get("hand_after")
    state = net.state_dict()
    with torch.no_grad():
        for name, mine in state.items():
            theirs = source.get(name)
            if theirs is None:
                if after_new and name.startswith("after.2."):
                    mine.zero_()  # the new judge of the hand left adds nothing to the scores at first
                continue  # a part the scores do not read (a critic of its own, the hands head) keeps its initialisation
            if theirs.dim() != mine.dim() or any(t > m for t, m in zip(theirs.shape, mine.shape, strict=True)):
                raise ValueError(f"cannot grow {name}: {tuple(theirs.shape)} there, {tuple(mine.shape)} here")
            if theirs.dim() == 2:
                out, into = theirs.shape
                mine[:out, :into] = theirs
                mine[:out, into:] = 0.0  # new units feed no old one
            elif theirs.dim() == 1:
                mine[: theirs.shape[0]] = theirs
            else:
                mine.copy_(theirs)
    net.load_state_dict(state)
    return said

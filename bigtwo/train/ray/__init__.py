"""The trainers on Ray (``bigtwo train --ray local|auto|ADDRESS``; the ``ray`` extra).

| module | job |
|---|---|
| ``actors`` | ``RayRollouts``: rollout actors (``RolloutActor``, each a ``bigtwo.train.rollout.RolloutWorker``) feeding the learner, their faults and checkpoints |
| ``gate`` | ``BatchGate``: the learner takes each live actor's batch once, in order, of the weights it sent |

Importing this package imports no Ray; ``actors`` does (``gate`` is plain Python). The learner,
its loop and the rollout itself are the local trainer's (``bigtwo.train.loop``, ``bigtwo.train.rollout``):
only where the rollouts run differs.
"""

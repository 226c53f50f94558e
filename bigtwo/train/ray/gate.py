"""Which rollout batches a learner takes: each live actor's batches once, in order, of the weights sent.

Every batch (``bigtwo.train.rollout.Batch``) is tagged by the actor that played it: the actor's id (a
replaced actor gets a new one), its rollout number ``seq`` (1, 2, ... per actor) and the weights
version it acted with. ``BatchGate.accept`` takes a batch only when

- its actor is one of the run's live actors (``open``; an actor that died is ``close``d when it
  is replaced, so nothing it sent, or half-sent, is ever taken);
- its ``seq`` is past the last one taken from that actor (a batch delivered twice is refused);
- it acted with the weights the learner just sent (``version``): the update it feeds is on-policy.

Refusals are counted (``rejected``, logged as ``charts/batches_rejected``) with their reasons.

>>> from types import SimpleNamespace as B
>>> gate = BatchGate()
>>> gate.open("0.0")
>>> gate.accept(B(actor="0.0", seq=1, version=3), version=3)
(True, '')
>>> gate.accept(B(actor="0.0", seq=1, version=3), version=3)
(False, 'batch 1 of actor 0.0 was taken already')
>>> gate.close("0.0")
>>> gate.accept(B(actor="0.0", seq=2, version=3), version=3)
(False, 'actor 0.0 is not in the run (replaced or never started)')
"""

from __future__ import annotations

from typing import Any


class BatchGate:
    """The learner's record of what each live actor sent; see the module docstring."""

    def __init__(self) -> None:
        self.last_seq: dict[str, int] = {}
        self.rejected = 0
        self.reasons: list[str] = []

    def open(self, actor: str) -> None:
        """A new actor joins: its batches are taken from ``seq`` 1 on."""
        self.last_seq[actor] = 0

    def close(self, actor: str) -> None:
        """An actor left (died, replaced): nothing more is taken from it."""
        self.last_seq.pop(actor, None)

    def accept(self, batch: Any, version: int) -> tuple[bool, str]:
        """``(True, "")`` and the batch is recorded as taken, or ``(False, why)``."""
        why = ""
        last = self.last_seq.get(batch.actor)
        if last is None:
            why = f"actor {batch.actor} is not in the run (replaced or never started)"
        elif batch.seq <= last:
            why = f"batch {batch.seq} of actor {batch.actor} was taken already"
        elif batch.version != version:
            why = f"batch {batch.seq} of actor {batch.actor} acted with weights version {batch.version}, not {version}"
        if why:
            self.rejected += 1
            self.reasons.append(why)
            return False, why
        self.last_seq[batch.actor] = batch.seq
        return True, ""

"""bigtwo: a reinforcement-learning kit for Big Two and its regional variants.

The package installs this one top-level name; each part of the kit is a sub-package:

=================== ==================== =========================================================
import              folder (link)        job
=================== ==================== =========================================================
``bigtwo.env``      ``bigtwo/env``       the rules, the batched engine, the environments, records
                    (``bigtwo_env/``)
``bigtwo.agents``   ``bigtwo/agents``    baseline agents, the heuristic, search, the shipped networks
                    (``agents/``)
``bigtwo.arena``    ``bigtwo/arena``     duplicate-deal tournaments, ratings, ladders, evaluation
                    (``arena/``)
``bigtwo.train``    ``bigtwo/train``     PyTorch self-play trainers (needs the ``train`` extra)
                    (``train/``)
``bigtwo.web``      ``bigtwo/web``       the web table (needs the ``web`` extra)
                    (``bigtwo_web/``)
``bigtwo.configs``  ``bigtwo/configs``   the YAML rule variants and training configs
                    (``configs/``)
``bigtwo.cli``      ``bigtwo/cli``       the ``bigtwo`` command
``bigtwo.layout``   ``bigtwo/layout.py`` where the files are, and each folder's one import name
=================== ==================== =========================================================

Every module lives under ``bigtwo/``; a checkout keeps the design's top-level folders (``bigtwo_env/``,
``agents/``, ...) as links into it, which nothing imports: ``import agents`` from the repository root
fails with an error naming ``bigtwo.agents`` (:mod:`bigtwo.layout`). Importing ``bigtwo`` imports
nothing else.
"""

from __future__ import annotations

__version__ = "0.2.0"  # the one place the version is written (pyproject reads it)

__all__ = ["__version__"]

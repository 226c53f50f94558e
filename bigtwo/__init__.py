"""bigtwo: a reinforcement-learning kit for Big Two and its regional variants.

The package installs this one top-level name; each part of the kit is a sub-package:

========================  ==============  ===================================================
import                    folder          job
========================  ==============  ===================================================
``bigtwo.env``            ``bigtwo_env/`` the rules, the batched engine, the environments, records
``bigtwo.agents``         ``agents/``     baseline agents, the heuristic, search, the shipped networks
``bigtwo.arena``          ``arena/``      duplicate-deal tournaments, ratings, ladders, evaluation
``bigtwo.train``          ``train/``      PyTorch self-play trainers (needs the ``train`` extra)
``bigtwo.web``            ``bigtwo_web/`` the web table (needs the ``web`` extra)
``bigtwo.configs``        ``configs/``    the YAML rule variants and training configs
``bigtwo.cli``            ``bigtwo/cli/`` the ``bigtwo`` command
========================  ==============  ===================================================

The repository keeps its folders; ``bigtwo/`` holds the command line and one link per folder,
so that the import names above are what every tool (Python, the type checker, the docs, an IDE)
sees. Importing ``bigtwo`` imports nothing else.
"""

from __future__ import annotations

__version__ = "0.2.0"  # the one place the version is written (pyproject reads it)

__all__ = ["__version__"]

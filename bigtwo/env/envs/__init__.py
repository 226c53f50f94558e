"""The environments over the engine: one match by hand, PettingZoo, Gymnasium, the vector env.

``game`` (:class:`Game`, a readable single-match view), ``aec`` (the PettingZoo AEC env),
``gym_env`` (the Gymnasium single-agent env), ``vector`` (N matches for trainers), ``env_base``
(what the AEC and Gymnasium envs share) and ``render`` (text views). Builds on the rules and
the engine.
"""

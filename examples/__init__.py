"""Examples that use the kit from outside (not installed with the package; run them from the repository's root).

| module | what |
|---|---|
| ``rllib_example`` | ``python -m examples.rllib_example``: RLlib's PPO (new API stack) on the PettingZoo env with action masking, played in a duplicate tournament (the ``ray`` extra) |
"""

"""Benchmarks of the trainers (not installed with the package; run them from the repository's root).

| module | what |
|---|---|
| ``ray_bench`` | ``python -m benchmarks.ray_bench``: training env-steps/s locally and on 1 and 2 Ray actors (the ``ray`` extra) |
| ``dense_head`` | ``python -m benchmarks.dense_head``: the legal-plays-only ``bigtwo.train.networks.ActionScorer`` against a dense ~19,900-wide head |

``tests/test_ray.py`` and ``tests/test_train.py`` run each of them on a tiny setting.
"""

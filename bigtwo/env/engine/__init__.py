"""The batched engine: N matches at once, state as NumPy arrays, stepped by Numba kernels.

``engine`` (the :class:`Engine`), ``kernels`` (the compiled rules), ``state`` (the privileged
global state), ``observation`` (what a seat sees), ``seeds`` (deals from seeds) and ``jit`` (the
kernels' compile settings and cache). Builds on ``bigtwo.env.rules`` only.
"""

"""bigtwo.configs: the named rule variants (``variants/*.yaml``) and training configs (``train/*.yaml``)."""

from __future__ import annotations

from bigtwo.layout import second_name

if __name__ != "bigtwo.configs":  # ``import configs`` from the repository root
    raise second_name(__name__, "bigtwo.configs")

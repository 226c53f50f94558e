"""The rules: cards, plays and how they compare, rule variants, the fixed action table.

Pure Python and NumPy, no compiled kernels: ``cards`` (card texts and ids), ``combos`` (what a set
of cards is and what beats what), ``declaration`` (how a rule setting is declared: default, allowed
values, description, how the kernels receive it), ``variant`` (the rule settings and the named variants),
``actions`` (every legal play of a variant as a fixed table) and ``settings`` (``KEY=VALUE``
text). Imports nothing else of ``bigtwo.env`` but ``checks``.
"""

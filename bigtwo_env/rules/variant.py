"""Rule variants: a frozen, hashable ``Variant`` read from YAML, every setting of RULES.md.

Named variants live in ``configs/variants/*.yaml`` (shipped in the wheel as the package
``bigtwo.configs``); a user's own YAML file may set any combination of fields. Fields not
given take the defaults below (4 players, 13 cards, settings off).

| field | allowed | default |
|---|---|---|
| players | 2, 3, 4 | 4 |
| cards_per_player | 1 .. 52 // players | 13 |
| suit_order | four suits low to high, e.g. ``[D, C, H, S]`` | D C H S |
| opening_card | a card (``3D``, ``3C``, ...) or ``lowest`` | 3D |
| opening_every_game | bool | false |
| straights | ``hk``, ``tw``, ``jp``, ``jp_a2345_low`` or a list of windows | hk |
| jqka2_suited | ``flush``, ``no_play`` (J-Q-K-A-2 in one suit where it is no straight window) | flush |
| flush_order | ``suit_first``, ``rank_first`` | suit_first |
| pair_chain | bool | false |
| two_ends_trick | bool | false |
| last_card_rule | ``off``, ``enforce``, ``liability`` | off |
| scoring | ``cards``, ``tiered``, ``pairwise``, ``win_loss``, ``collect`` | cards |
| tiers | ``collect`` only: ``[[from_cards, multiplier], ...]``, from_cards 1 .. 1000 rising, multipliers 0 < m <= 1000 | [] (none) |
| unit | number, 0 < unit <= 1e6 | 1 |
| buy_in | number 0 .. 1e12 (0 = no table stakes) | 0 |
| rake | number 0 .. 1e12 | 0 |
| penalty_multiplier_for_twos | integer 1 .. 100 | 1 |
| games | integer 1 .. 1,000,000 (games per match) | 1 |
| target_score | number 0 .. 1e15 (0 = off) | 0 |
| direction | ``clockwise``, ``counterclockwise`` (labelling only) | counterclockwise |
| direction_per_game | ``fixed``, ``alternate``, ``random`` (play order of each game of a match) | fixed |

A straight window is five ranks written lowest first, as text ``"A-2-3-4-5"`` or a list; its
top card (whose suit breaks ties) is the last rank written unless given as
``{ranks: A-2-3-4-5, top: "2"}``. Windows are listed lowest straight first.

``jqka2_suited`` only matters where J-Q-K-A-2 is not a straight window (``tw``, ``jp``): ``flush``
keeps the suited J-Q-K-A-2 a flush (CN), ``no_play`` makes it no play at all (TW: "never a legal
hand, even in one suit").

``tiers`` multiply a ``collect`` loser's payment by its bracket: ``[[10, 2], [13, 3]]`` pays n
(cards left, 2s counted with ``penalty_multiplier_for_twos``) for 1..9, 2n from 10 and 3n from 13
cards, as ``tiered`` does. ``[]``: every loser pays n.

Every number is finite and bounded so that every payoff stays finite and every counter in
range: a game's payoff is at most 3 losers x 422 counted cards (26 cards, 2s x 100) x tier 1000 x
unit 1e6, plus a rake of 1e12, about 2.3e12, and a match of 1,000,000 games sums to about 2.3e18,
well inside float32 and float64 (no inf, no NaN); games played fit the engine's int32 counter.
Integers must be integers (``2.0`` is no ``games``); ``.inf``, ``.nan`` and numbers past the
bounds raise ``ValueError`` naming the field.

``direction_per_game``: ``fixed`` plays every game of a match in seat order (seat + 1 next);
``alternate`` reverses the order in the match's 2nd, 4th, ... game; ``random`` draws each game's
order from the game's seed and deal number. A reversed game plays seat - 1 next, which also moves
the last-card duty and the settlement order (see ``Engine``).

>>> v = load_variant("taiwan")
>>> v.opening_card, v.straights_preset, v.scoring
('3C', 'tw', 'cards')
>>> load_variant("taiwan", players=3).players
3
"""

from __future__ import annotations

import dataclasses
import math
import reprlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from bigtwo.env.checks import is_whole
from bigtwo.env.rules.cards import RANKS, SUIT_SYMBOLS, SUITS, card_from_text

# A straight window: five rank indices lowest-written first, and the rank index of its top card.
Window = tuple[tuple[int, ...], int]

_NORMAL_WINDOWS: tuple[Window, ...] = tuple((tuple(range(s, s + 5)), s + 4) for s in range(0, 8))  # 3-7 .. 10-A
_R = {r: i for i, r in enumerate(RANKS)}
STRAIGHT_PRESETS: dict[str, tuple[Window, ...]] = {
    "hk": _NORMAL_WINDOWS + (((8, 9, 10, 11, 12), 12),),  # ... J-Q-K-A-2
    "tw": _NORMAL_WINDOWS
    + (
        ((12, 0, 1, 2, 3), 12),  # 2-3-4-5-6, top card the 2
        ((11, 12, 0, 1, 2), 12),  # A-2-3-4-5 (highest), top card the 2
    ),
    "jp": _NORMAL_WINDOWS,
    "jp_a2345_low": (((11, 12, 0, 1, 2), 2),) + _NORMAL_WINDOWS,  # A-2-3-4-5 lowest, top 5
}

# The allowed values of each setting with a fixed list. The kernels read a setting's value as its
# place in its list (``choice_code``): they take their codes from here, never write them out.
CHOICES: dict[str, tuple[Any, ...]] = {
    "players": (2, 3, 4),
    "flush_order": ("suit_first", "rank_first"),
    "last_card_rule": ("off", "enforce", "liability"),
    "scoring": ("cards", "tiered", "pairwise", "win_loss", "collect"),
    "direction": ("clockwise", "counterclockwise"),
    "direction_per_game": ("fixed", "alternate", "random"),
    "jqka2_suited": ("flush", "no_play"),
}
DEFAULT_VARIANT = "taiwan"  # the variant every ``variant=`` argument of the package defaults to


def choice_code(setting: str, value: Any) -> int:
    """The code the kernels use for ``value`` of ``setting``: its place in ``CHOICES[setting]``.

    >>> choice_code("scoring", "cards"), choice_code("last_card_rule", "liability")
    (0, 2)
    >>> choice_code("scoring", "poker")
    Traceback (most recent call last):
    ...
    ValueError: scoring 'poker' has no code; allowed: cards, tiered, pairwise, win_loss, collect
    """
    allowed = CHOICES[setting]
    if value not in allowed:
        raise ValueError(f"{setting} {value!r} has no code; allowed: {', '.join(map(str, allowed))}")
    return allowed.index(value)


# What a game's payoff is under each scoring, in a few words (tables and reports say it).
SCORING_SUMMARY = {
    "cards": "minus the cards left",
    "tiered": "losers pay their cards left, x2 from 10, x3 from 13; the winner collects",
    "pairwise": "every pair settles the difference of their cards left",
    "win_loss": "the winner +1, the others -1/(players-1)",
    "collect": "each loser pays the winner its cards left (times its tier); the winner collects",
}


@dataclass(frozen=True)
class Variant:
    """One table's rules. Build with ``load_variant``; every field is a RULES.md setting."""

    name: str = "custom"
    players: int = 4
    cards_per_player: int = 13
    suit_order: tuple[str, ...] = ("D", "C", "H", "S")
    opening_card: str = "3D"
    opening_every_game: bool = False
    straights: tuple[Window, ...] = STRAIGHT_PRESETS["hk"]
    straights_preset: str | None = "hk"
    jqka2_suited: str = "flush"
    flush_order: str = "suit_first"
    pair_chain: bool = False
    two_ends_trick: bool = False
    last_card_rule: str = "off"
    scoring: str = "cards"
    tiers: tuple[tuple[int, float], ...] = ()
    unit: float = 1.0
    buy_in: float = 0.0
    rake: float = 0.0
    penalty_multiplier_for_twos: int = 1
    games: int = 1
    target_score: float = 0.0
    direction: str = "counterclockwise"
    direction_per_game: str = "fixed"
    description: str = field(default="", compare=False)

    @property
    def suit_rank(self) -> tuple[int, ...]:
        """Strength of each physical suit (D, C, H, S order), 0 = lowest."""
        return tuple(self.suit_order.index(s) for s in SUITS)

    def card_values(self) -> tuple[int, ...]:
        """Each card id's value under this variant, 0 (the lowest card) .. 51: rank, then the
        variant's suit order (``rank * 4 + suit_rank[suit]``; the kernels' ``card_value``). Sorting
        by it puts cards in the variant's order.

        >>> v = load_variant("pusoy-dos")  # clubs lowest, diamonds highest
        >>> v.card_values()[:4], sorted(range(4), key=v.card_values().__getitem__)
        ((3, 0, 2, 1), [1, 3, 2, 0])
        """
        suit_rank = self.suit_rank
        return tuple(c // 4 * 4 + suit_rank[c % 4] for c in range(52))

    @property
    def opening_card_id(self) -> int:
        """Card id of ``opening_card``, or -1 for ``lowest``."""
        return -1 if self.opening_card == "lowest" else card_from_text(self.opening_card)

    def rules_key(self) -> tuple[Any, ...]:
        """The fields that decide which plays exist and how they compare (the action table)."""
        return (self.suit_order, self.straights, self.jqka2_suited, self.flush_order, self.pair_chain)

    def replace(self, **overrides: Any) -> Variant:
        """A copy with some fields changed, checked like ``load_variant``."""
        data = self.to_dict()
        data.update(overrides)
        return _build(data, source=f"variant {self.name!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain YAML-ready fields (``straights`` as its preset name or window texts)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("straights_preset",):
                continue
            value = getattr(self, f.name)
            if f.name == "straights":
                value = self.straights_preset or [_window_spec(w) for w in value]
            elif f.name == "suit_order":
                value = list(value)
            elif f.name == "tiers":
                value = [[cards, multiplier] for cards, multiplier in value]
            out[f.name] = value
        return out

    def describe(self) -> str:
        """Multi-line text of every setting, as ``bigtwo variants NAME`` prints it."""
        lines = [f"{self.name}: {self.description}".rstrip(": ")]
        for key, value in self.to_dict().items():
            if key in ("name", "description"):
                continue
            if key == "suit_order":
                value = " < ".join(SUIT_SYMBOLS[SUITS.index(s)] for s in value)
            elif key == "straights" and isinstance(value, str):
                value = f"{value} ({', '.join(_window_text(w) for w in self.straights)})"
            elif key == "tiers":
                value = ", ".join(f"x{m:g} from {n} cards" for n, m in self.tiers) or "none"
            lines.append(f"  {key:<28} {value}")
        return "\n".join(lines)

    @property
    def worst_payoff(self) -> float:
        """A floor under one seat's payoff for one game, settled from the cards left (``buy_in``,
        ``rake`` and last-card liability aside), in payoff units (its inverse is a natural reward scale).

        With ``n`` the most penalty cards a hand can count (``cards_per_player`` times
        ``penalty_multiplier_for_twos``): ``cards`` -n, ``tiered`` -3n (a loser pays 3n at 13 cards
        or more), ``pairwise`` -(players - 1) n (settling with every other seat), ``win_loss`` -1,
        ``collect`` -n times the highest ``tiers`` multiplier that n cards reach (1 without tiers);
        all times ``unit``. Exact for ``cards`` and ``tiered`` with 13 or more cards and no multiplier.

        >>> load_variant("taiwan").worst_payoff, load_variant("japan").worst_payoff
        (-13.0, -39.0)
        """
        n = self.cards_per_player * self.penalty_multiplier_for_twos
        collect = n * max([1.0, *(mult for start, mult in self.tiers if start <= n)])
        per_scoring = {
            "cards": n,
            "tiered": 3 * n,
            "pairwise": (self.players - 1) * n,
            "win_loss": 1,
            "collect": collect,
        }
        return -float(per_scoring[self.scoring]) * self.unit


def _window_spec(window: Window) -> str | dict[str, str]:
    """A window as YAML writes it: text, or ``{ranks, top}`` when the top card is not the last rank."""
    ranks, top = window
    text = "-".join(RANKS[r] for r in ranks)
    return text if top == ranks[-1] else {"ranks": text, "top": RANKS[top]}


def _window_text(window: Window) -> str:
    ranks, top = window
    text = "-".join(RANKS[r] for r in ranks)
    return text if top == ranks[-1] else f"{text} (top {RANKS[top]})"


# Bounds of the numeric fields (inclusive; ``unit`` and tier multipliers must also be > 0): they keep
# every payoff and match score finite and every counter in range (see the module docstring).
BOUNDS: dict[str, tuple[float, float]] = {
    "unit": (0, 1e6),
    "buy_in": (0, 1e12),
    "rake": (0, 1e12),
    "target_score": (0, 1e15),
    "penalty_multiplier_for_twos": (1, 100),
    "games": (1, 1_000_000),
    "tier_cards": (1, 1000),
    "tier_multiplier": (0, 1000),
}


def _is_number(value: Any) -> bool:
    """A finite int or float, not a bool (ints of any size compare without converting)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)


_SHORT = reprlib.Repr()  # values in messages: a 400-digit number or a long text shortened
_SHORT.maxlist = _SHORT.maxtuple = 12
_SHORT.maxstring = _SHORT.maxother = 80
_SHORT.maxlong = 40


def _bound(x: float) -> str:
    """A bound as the docstring table writes it: ``1000``, ``1e6``, ``1e12``."""
    return f"{x:.0e}".replace("e+0", "e").replace("e+", "e") if x >= 1e6 else f"{x:g}"


def _fail(source: str, name: str, value: Any, allowed: str) -> ValueError:
    return ValueError(f"{source}: field {name!r} has bad value {_SHORT.repr(value)}; allowed: {allowed}")


def _parse_window(source: str, item: Any) -> Window:
    allowed = "five consecutive ranks written lowest first, e.g. '3-4-5-6-7' or {ranks: A-2-3-4-5, top: '2'}"
    top_text = None
    ranks_spec = item
    if isinstance(item, dict):
        unknown = set(item) - {"ranks", "top"}
        if unknown or "ranks" not in item:
            raise _fail(source, "straights", item, allowed)
        ranks_spec, top_text = item["ranks"], item.get("top")
    if isinstance(ranks_spec, str):
        tokens = [t for t in ranks_spec.replace("-", " ").replace(",", " ").split() if t]
    elif isinstance(ranks_spec, (list, tuple)):
        tokens = [str(t) for t in ranks_spec]
    else:
        raise _fail(source, "straights", item, allowed)
    try:
        ranks = tuple(_R["10" if t.upper() == "T" else t.upper()] for t in tokens)
        top = ranks[-1] if top_text is None else _R["10" if str(top_text).upper() == "T" else str(top_text).upper()]
    except (KeyError, IndexError):
        raise _fail(source, "straights", item, allowed) from None
    consecutive = all((b - a) % 13 == 1 for a, b in zip(ranks, ranks[1:], strict=False))
    if len(ranks) != 5 or not consecutive or top not in ranks:
        raise _fail(source, "straights", item, allowed)
    return ranks, top


def _parse_tiers(source: str, value: Any) -> tuple[tuple[int, float], ...]:
    """``tiers`` as ``((from_cards, multiplier), ...)``, from_cards strictly rising."""
    top_cards, top_mult = BOUNDS["tier_cards"][1], BOUNDS["tier_multiplier"][1]
    allowed = (
        f"a list of [from_cards, multiplier] pairs with from_cards integers >= 1 (up to {_bound(top_cards)}) strictly "
        f"rising and multipliers numbers > 0 (up to {_bound(top_mult)}), e.g. [[10, 2], [13, 3]]; [] for none"
    )
    if not isinstance(value, (list, tuple)):
        raise _fail(source, "tiers", value, allowed)
    out: list[tuple[int, float]] = []
    for item in value:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise _fail(source, "tiers", value, allowed)
        cards, multiplier = item
        ok = is_whole(cards) and 1 <= cards <= top_cards
        ok = ok and _is_number(multiplier) and 0 < multiplier <= top_mult
        if not ok or (out and cards <= out[-1][0]):
            raise _fail(source, "tiers", value, allowed)
        out.append((int(cards), float(multiplier)))
    return tuple(out)


def _build(data: dict[str, Any], source: str) -> Variant:
    known = {f.name for f in dataclasses.fields(Variant)} - {"straights_preset"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{source}: unknown field {unknown[0]!r}; allowed fields: {', '.join(sorted(known))}")
    kw: dict[str, Any] = {}
    for name, value in data.items():
        kw[name] = _check_field(source, name, value)
    if "straights" in kw:
        kw["straights"], kw["straights_preset"] = kw["straights"]
    variant = Variant(**kw)
    if variant.tiers and variant.scoring != "collect":
        raise ValueError(
            f"{source}: field 'tiers' is set ({data['tiers']!r}) but only scoring 'collect' uses it; "
            f"scoring is {variant.scoring!r}: set scoring: collect or tiers: []"
        )
    if variant.players * variant.cards_per_player > 52:
        raise ValueError(
            f"{source}: {variant.players} players x {variant.cards_per_player} cards needs "
            f"{variant.players * variant.cards_per_player} cards, but the deck has 52; "
            f"allowed cards_per_player for {variant.players} players: 1..{52 // variant.players}"
        )
    return variant


def _check_field(source: str, name: str, value: Any) -> Any:
    def need(ok: bool, allowed: str) -> None:
        if not ok:
            raise _fail(source, name, value, allowed)

    is_bool = isinstance(value, bool)
    is_int = is_whole(value)  # an integer, not a bool (YAML reads ``true`` as one)
    is_num = _is_number(value)
    if name in ("name", "description"):
        need(isinstance(value, str), "text")
        return value
    if name == "last_card_rule" and value is False:
        value = "off"  # YAML 1.1 reads a bare `off` as false
    if name in CHOICES:
        need(value in CHOICES[name] and (name != "players" or is_int), ", ".join(map(str, CHOICES[name])))
        return int(value) if name == "players" else value
    if name == "cards_per_player":
        need(is_int and 1 <= value <= 26, "an integer 1..26 (13 for 4 players; 26 for two players)")
        return int(value)
    if name == "suit_order":
        seq = value.replace(",", " ").split() if isinstance(value, str) else value
        need(isinstance(seq, (list, tuple)), "the four suits low to high, e.g. [D, C, H, S]")
        try:
            suits = tuple(SUITS[card_from_text("3" + str(s)) % 4] for s in seq)
        except ValueError:
            raise _fail(source, name, value, "the four suits low to high, e.g. [D, C, H, S]") from None
        need(sorted(suits) == sorted(SUITS), "the four suits low to high, each once, e.g. [D, C, H, S]")
        return suits
    if name == "opening_card":
        allowed = "a card such as 3D or 3C, or 'lowest'"
        need(isinstance(value, (str, int)) and not is_bool, allowed)
        if str(value).lower() == "lowest":
            return "lowest"
        try:
            cid = card_from_text(str(value))
        except ValueError:
            raise _fail(source, name, value, allowed) from None
        return RANKS[cid // 4] + SUITS[cid % 4]
    if name in ("opening_every_game", "pair_chain", "two_ends_trick"):
        need(is_bool, "true or false")
        return value
    if name == "straights":
        if isinstance(value, str):
            need(value in STRAIGHT_PRESETS, ", ".join(STRAIGHT_PRESETS) + " or a list of windows")
            return STRAIGHT_PRESETS[value], value
        need(isinstance(value, (list, tuple)) and len(value) > 0, "a preset name or a list of windows")
        windows = tuple(_parse_window(source, w) for w in value)
        need(len({frozenset(w[0]) for w in windows}) == len(windows), "each window's ranks listed once")
        return windows, None
    if name == "tiers":
        return _parse_tiers(source, value)
    if name in ("unit", "buy_in", "rake", "target_score"):
        low, high = BOUNDS[name]
        if name == "unit":
            need(is_num and low < value <= high, f"a finite number > 0 and <= {_bound(high)}")
        else:
            need(is_num and low <= value <= high, f"a finite number >= 0 (0 = off) and <= {_bound(high)}")
        return float(value)
    if name in ("penalty_multiplier_for_twos", "games"):
        low, high = BOUNDS[name]
        off = " (1 = off)" if name == "penalty_multiplier_for_twos" else ""
        need(is_int and low <= value <= high, f"an integer >= 1{off} and <= {int(high):,}")
        return int(value)
    raise AssertionError(name)  # pragma: no cover - every known field is handled above


def variant_dir() -> Path:
    """Folder of the named variants' YAML files (inside the installed package)."""
    return Path(str(resources.files("bigtwo.configs") / "variants"))


def variant_names() -> list[str]:
    """Names of the shipped variants, sorted."""
    return sorted(p.stem for p in variant_dir().glob("*.yaml"))


class _DuplicateKey(yaml.YAMLError):
    """A mapping with a key written twice."""


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key written twice in one mapping (plain YAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base loader says so
                break
            if duplicate:
                raise _DuplicateKey(
                    f"line {key_node.start_mark.line + 1}: key {key!r} is given twice; give each key once"
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def yaml_mapping(text: str, source: str) -> dict[str, Any]:
    """YAML text's top-level mapping of field names to values (empty text: ``{}``).

    ``ValueError`` naming ``source`` if the text is not valid YAML (a key given twice included), is
    not a mapping, or has a key that is not text."""
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as exc:
        raise ValueError(f"{source}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{source}: not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a mapping of field: value, got {type(data).__name__}")
    for key in data:
        if not isinstance(key, str):
            raise ValueError(f"{source}: field names are text, got the key {key!r} ({type(key).__name__})")
    return data


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """A YAML file's top-level mapping (see ``yaml_mapping``); ``ValueError`` naming the file if it
    cannot be read, is a folder, is not UTF-8 text, is not valid YAML or not a mapping of names."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a YAML file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not UTF-8 text (byte {exc.start} is {raw[exc.start]:#04x}); save it as UTF-8"
        ) from None
    return yaml_mapping(text, str(path))


def _load_file(path: Path) -> Variant:
    data = read_yaml_mapping(path)
    data.setdefault("name", path.stem)
    return _build(data, source=str(path))


def load_variant(name_or_path: str | Path | Variant = DEFAULT_VARIANT, **overrides: Any) -> Variant:
    """A named variant (``"taiwan"``; default ``DEFAULT_VARIANT``) or a YAML file's, with fields overridden.

    Raises ``ValueError`` naming the file, the field, the bad value and what is allowed.
    """
    if isinstance(name_or_path, Variant):
        base = name_or_path
    else:
        text = str(name_or_path)
        candidate = Path(text)
        if text in variant_names():
            base = _load_file(variant_dir() / f"{text}.yaml")
        elif candidate.suffix in (".yaml", ".yml") or candidate.exists():
            if candidate.is_dir():
                raise ValueError(f"variant {text!r} is a folder; give a variant name or a YAML file")
            if not candidate.is_file():
                raise ValueError(f"variant file {text!r} does not exist")
            base = _load_file(candidate)
        else:
            raise ValueError(
                f"unknown variant {text!r}; allowed: {', '.join(variant_names())} or a path to a YAML file"
            )
    return base.replace(**overrides) if overrides else base

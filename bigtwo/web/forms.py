"""The checks of what a client sends: the create-room form, each field with the web's bounds, and
the room's set-up made from it; ``RoomError``, the refusal that says why.

**The form** (``room_setup``, ``FORM_FIELDS``; ``POST /api/rooms`` of ``bigtwo.web.app``) is
checked field by field and builds nothing: a refused form costs nothing. The variant is a shipped
one (``variant``, with ``settings``) or a variant file's text (``yaml``) with at most
``MAX_GAMES`` games a match and a description of at most ``MAX_DESCRIPTION`` characters; each seat
is ``person`` or an agent (``check_agent``: a name of ``AGENT_OPTIONS`` with options its
declaration allows within the web's caps, or a checkpoint file the server was given); the
seats' ``names`` at most ``MAX_NAME`` characters; ``pace``, ``away_timeout`` and ``turn_timeout``
seconds within ``MAX_PACE``, ``MAX_AWAY`` and ``MAX_TURN``; a ``seed`` only for a room with at
most one person. Every text, at any depth and as decoded (YAML and JSON escapes too), is one
UTF-8 can write (``check_unicode``).

**The set-up** (``setup_for``) is what a ``bigtwo.web.room.Room`` is made from and the store
keeps: the variant, the seats, the timings, the stand-in and the seed. Each person seat gets a
fresh secret token; the set-up keeps its hash (``hash_token``) and hands the plain tokens
(``tokens``, never stored) to the room's creator, once.

>>> setup = setup_for("taiwan", ["person", "greedy", "greedy", "greedy"], seed=4)
>>> [s["kind"] for s in setup["seats"]], [t is None for t in setup["tokens"]]
(['person', 'greedy', 'greedy', 'greedy'], [False, True, True, True])
>>> room_setup({"seats": ["person", "greedy"]}, lambda variant: "greedy")
Traceback (most recent call last):
bigtwo.web.forms.RoomError: variant 'taiwan' has 4 seats; seats must be a list of 4
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from bigtwo.agents.registry import AGENT_SPECS, WEB_THREADS, split_spec
from bigtwo.env.engine.seeds import check_seed
from bigtwo.env.rules.variant import DEFAULT_VARIANT, Variant, load_variant, variant_names, yaml_mapping
from bigtwo.web.states import SeatState

DEFAULT_PACE = 0.8  # seconds an agent waits before it plays, so people can follow
DEFAULT_AWAY = 30.0  # seconds a person may be away before a stand-in agent plays for them
DEFAULT_TURN = 120.0  # seconds a connected person has for a turn before the stand-in plays it
MAX_PACE = 10.0
MAX_AWAY = 3600.0
MAX_TURN = 3600.0
MAX_GAMES = 100  # games a web room's match may have (every state message carries the match's games)
MAX_DESCRIPTION = 500  # characters of a variant's description (sent in every state message)
MAX_NAME = 40  # characters of a seat's name
# the agents a web seat may have and the options it may set on them, as their declarations say
# (bigtwo.agents.registry: each option's web caps, e.g. the budget of one move, are declared there too)
AGENT_OPTIONS: dict[str, tuple[str, ...]] = {
    name: spec.option_names(web=True) for name, spec in AGENT_SPECS.items() if spec.web
}
MAX_AGENT_THREADS = WEB_THREADS  # rollout threads: a core is left to the event loop
FORM_FIELDS = ("variant", "yaml", "settings", "seats", "names", "pace", "away_timeout", "turn_timeout", "seed")


class RoomError(ValueError):
    """A request the room refuses; the message says why and what is allowed."""


def hash_token(token: str) -> str:
    """What the store and the room keep of a seat's token: its SHA-256 (hex)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_number(value: Any, what: str, high: float, unit: str = "seconds") -> float:
    """``value`` as a float in ``0..high``; ``RoomError`` for anything else (text, bool, null, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= high:
        raise RoomError(f"{what} is a number of {unit} 0..{high:g}, got {value!r}")
    return float(value)


def check_agent(spec: Any, files: Mapping[str, Any] = {}) -> str:  # noqa: B006 - read only
    """``spec`` if a web seat may have that agent: a name of ``AGENT_OPTIONS`` with only its
    options, each a value its declaration allows within the web's caps (``AgentSpec.check_options``
    with ``web=True``: the budget of a move, ``bigtwo.agents.registry.WEB_SIMULATIONS``, ``WEB_SECONDS``,
    ``WEB_TOP_K`` and ``WEB_THREADS``), or one of the checkpoint ``files`` the server was started with (by
    name). Never a path: a web seat cannot load what the server was not given. Builds nothing.

    >>> check_agent("search:simulations=500")
    'search:simulations=500'
    >>> check_agent("search:seconds=86400")
    Traceback (most recent call last):
    bigtwo.web.forms.RoomError: agent 'search:seconds=86400': seconds must be a number 0..1 on this server (seconds per move), got 86400
    """
    allowed = [*AGENT_OPTIONS, *files]
    if not isinstance(spec, str) or not spec.strip():
        raise RoomError(f"a seat's agent is a name: one of {', '.join(allowed)}; got {spec!r}")
    spec = spec.strip()
    if spec in files:
        return spec
    name = spec.partition(":")[0].strip().lower()
    if name not in AGENT_OPTIONS:  # the name first: an unknown agent's options are never read
        raise RoomError(
            f"unknown agent {spec!r}; allowed: {', '.join(allowed)} (names, with options such as "
            "'search:simulations=500')"
        )
    try:
        _, options = split_spec(spec)  # YAML values, anchors and aliases refused (bigtwo.env.rules.settings)
    except ValueError as exc:
        raise RoomError(str(exc)) from None
    check_unicode(options, f"agent {spec!r}")  # option values are YAML: "weights=\"\\ud800\"" decodes to a surrogate
    unknown = sorted(set(options) - set(AGENT_OPTIONS[name]))
    if unknown:
        takes = ", ".join(AGENT_OPTIONS[name]) or "no options"
        raise RoomError(f"agent {spec!r}: option {unknown[0]!r} is not allowed on this server; {name} takes: {takes}")
    try:
        AGENT_SPECS[name].check_options(options, web=True)
    except ValueError as exc:
        raise RoomError(f"agent {spec!r}: {exc}") from None
    return spec


def check_text(value: Any, what: str, most: int) -> str:
    """``value`` if it is text of at most ``most`` characters that UTF-8 can write."""
    if not isinstance(value, str):
        raise RoomError(f"{what} must be text, got {value!r}")
    if len(value) > most:
        raise RoomError(f"{what} may have at most {most} characters, got {len(value)}")
    return check_unicode(value, what)


def check_unicode(value: Any, what: str) -> Any:
    """``value`` if every text in it (keys and values of dicts, items of lists and tuples, at any
    depth) is one UTF-8 can write; ``RoomError`` naming ``what`` for a lone surrogate, which JSON
    and YAML escapes decode to and which no page, log or socket can carry. Checked on what a
    request decodes to (YAML inside JSON, an agent's options), not only on its raw text.

    >>> check_unicode({"name": "café", "seats": ["ok"]}, "the room")["name"]
    'café'
    >>> check_unicode({"name": chr(0xD800)}, "the variant")
    Traceback (most recent call last):
    bigtwo.web.forms.RoomError: the variant: text must be valid Unicode (no lone surrogates), got '\\ud800'
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                shown = item.encode("utf-8", "backslashreplace").decode("utf-8")
                raise RoomError(f"{what}: text must be valid Unicode (no lone surrogates), got '{shown}'") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return value


def room_setup(
    body: Any,
    default_agent: Callable[[Variant], str],
    pace: float = DEFAULT_PACE,
    away_timeout: float = DEFAULT_AWAY,
    turn_timeout: float = DEFAULT_TURN,
    files: Mapping[str, Any] = {},  # noqa: B006 - read only
) -> dict[str, Any]:
    """The set-up of a room from the page's create-room form (``FORM_FIELDS``; see
    ``bigtwo.web.app``), every field checked; ``RoomError`` naming the first bad one. Builds no
    agent: ``default_agent(variant)`` names the seats' default and the stand-in."""
    if not isinstance(body, dict):
        raise RoomError("the request body must be a JSON object of the form's fields")
    unknown = sorted(set(body) - set(FORM_FIELDS))
    if unknown:
        raise RoomError(f"unknown field {unknown[0]!r}; fields are: {', '.join(sorted(FORM_FIELDS))}")
    settings = body.get("settings")
    settings = {} if settings is None else settings
    if not isinstance(settings, dict):
        raise RoomError(f"settings must be an object of variant fields, got {settings!r}")
    try:
        if body.get("yaml") is not None:
            data = yaml_mapping(
                check_text(body["yaml"], "yaml (the text of a variant file)", 20_000), "the variant file"
            )
            data.setdefault("name", "custom")
            variant = Variant().replace(**{**data, **settings})
        else:
            name = body.get("variant", DEFAULT_VARIANT)
            if not isinstance(name, str) or name not in variant_names():
                raise RoomError(f"unknown variant {name!r}; allowed: {', '.join(variant_names())} (or send yaml)")
            variant = load_variant(name, **settings)
    except RoomError:
        raise
    except (TypeError, ValueError) as exc:
        raise RoomError(f"variant: {exc}") from None
    if variant.games > MAX_GAMES:
        raise RoomError(f"games must be 1..{MAX_GAMES} for a room on this server, got {variant.games}")
    check_text(variant.description, "the variant's description", MAX_DESCRIPTION)
    check_text(variant.name, "the variant's name", MAX_NAME)
    seats = body.get("seats")
    if seats is None:
        seats = [SeatState.PERSON] + [default_agent(variant)] * (variant.players - 1)
    if not isinstance(seats, list):
        raise RoomError("seats must be a list: 'person' or an agent name per seat")
    seats = [s.strip() if isinstance(s, str) else s for s in seats]
    for spec in seats:
        if spec != SeatState.PERSON:
            check_agent(spec, files)
    seed = body.get("seed")
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise RoomError(str(exc)) from None
    if seed is not None and seats.count(SeatState.PERSON) > 1:
        raise RoomError(
            "a chosen seed fixes the deal, which the creator would know: only a room with at most one person "
            "may choose it (leave seed out to deal at random)"
        )
    setup = setup_for(
        variant,
        seats,
        names=body.get("names"),
        pace=pace if body.get("pace") is None else body["pace"],
        away_timeout=away_timeout if body.get("away_timeout") is None else body["away_timeout"],
        turn_timeout=turn_timeout if body.get("turn_timeout") is None else body["turn_timeout"],
        stand_in=default_agent(variant),
        seed=seed,
    )
    return check_unicode(setup, "the room")  # every text as decoded (YAML's escapes too), stored and shown later


def setup_for(
    variant: Variant | str,
    seats: list[str],
    names: list[str] | None = None,
    pace: float = DEFAULT_PACE,
    away_timeout: float = DEFAULT_AWAY,
    stand_in: str = "heuristic",
    seed: int | None = None,
    turn_timeout: float = 0.0,
    **overrides: Any,
) -> dict[str, Any]:
    """A room's set-up: ``seats`` one ``"person"`` or agent name per seat (checked by the
    caller against the agents it can build), each person seat given a fresh secret token
    (``tokens``, which the store never writes; the seats keep its hash)."""
    var = load_variant(variant, **overrides)
    if not isinstance(seats, list) or len(seats) != var.players:
        raise RoomError(f"variant {var.name!r} has {var.players} seats; seats must be a list of {var.players}")
    if not all(isinstance(s, str) and s.strip() for s in seats):
        raise RoomError(f"each seat is 'person' or an agent name, got {seats!r}")
    if names is not None and (
        not isinstance(names, list) or len(names) != len(seats) or not all(isinstance(n, str) for n in names)
    ):
        raise RoomError(f"names must be {len(seats)} texts, one per seat; got {names!r}")
    for n in names or ():
        check_text(n.strip(), "a seat's name", MAX_NAME)
    pace = check_number(pace, "pace", MAX_PACE)
    away_timeout = check_number(away_timeout, "away_timeout", MAX_AWAY)
    turn_timeout = check_number(turn_timeout, "turn_timeout", MAX_TURN)
    people = 0
    out, tokens = [], []
    for i, kind in enumerate(seats):
        kind = kind.strip()
        if kind == SeatState.PERSON:
            people += 1
        default = f"player {people}" if kind == SeatState.PERSON else kind
        name = (names[i].strip() if names else "") or default
        token = secrets.token_urlsafe(16)  # an agent seat gets one too: nobody knows it
        tokens.append(token if kind == SeatState.PERSON else None)
        out.append({"kind": kind, "name": name[:MAX_NAME], "token_hash": hash_token(token)})
    return {
        "variant": var.to_dict(),
        "seats": out,
        "tokens": tokens,
        "pace": pace,
        "away_timeout": away_timeout,
        "turn_timeout": turn_timeout,
        "stand_in": stand_in,
        "seed": seed,
    }

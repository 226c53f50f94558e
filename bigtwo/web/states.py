"""The words of the web table's wire for who holds a seat and who plays a turn, declared once.

Each is a ``SeatState``, a ``str`` (``str()`` and f-strings give the word too), so JSON, the
store and the page see the plain word; the page's JavaScript writes the same words (``bigtwo/web/page/``).

| word | a seat's ``kind`` | a move's ``by`` | the room's ``controller`` | a seat's ``connection`` |
|---|---|---|---|---|
| ``person`` | a person's seat | a person played it | the person to act plays | |
| ``agent`` | an agent's seat | an agent played it | the agent to act plays | an agent's seat |
| ``stand-in`` | | the stand-in played it for its person | the stand-in plays for its person | its person has been away ``away_timeout`` seconds |
| ``waiting`` | | | the person to act is away, not for ``away_timeout`` yet | |
| ``connected`` | | | | its person has a connection open |
| ``away`` | | | | its person has none open, not for ``away_timeout`` yet |

>>> import json
>>> json.dumps({"by": SeatState.STAND_IN}), SeatState.AGENT == "agent", f"{SeatState.AWAY}"
('{"by": "stand-in"}', True, 'away')
"""

from __future__ import annotations

from enum import Enum


class SeatState(str, Enum):  # enum.StrEnum once Python 3.10 is dropped
    """Who holds a seat or plays a turn, as the wire writes it; see the module docstring."""

    PERSON = "person"
    AGENT = "agent"
    STAND_IN = "stand-in"
    WAITING = "waiting"
    CONNECTED = "connected"
    AWAY = "away"

    __str__ = str.__str__  # the word, not ``SeatState.AWAY``

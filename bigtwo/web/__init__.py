"""bigtwo.web: play Big Two in the browser (``bigtwo serve``).

| module | job |
|---|---|
| ``room`` | a room's state machine: seats, turns, disconnect policy, turn clock and what each seat may see |
| ``forms`` | the create-room form's checks, the web's bounds on agents and fields, a room's set-up, ``RoomError`` |
| ``states`` | the wire's words for who holds a seat and plays a turn (``person``, ``agent``, ``stand-in``, ...), declared once |
| ``store`` | rooms, matches and every play in SQLite (restarts resume; tokens only hashed; bounded history; a locked file's writes wait in a writer thread) |
| ``coach`` | what the strongest shipped agent would play, from one seat's information |
| ``coaching`` | the coach on the table: a seat's advice on its turn, one ranking per position, the coaches kept |
| ``replays`` | finished matches replayed through the engine, with the coach on each move, bounded and cached |
| ``hub`` | every room (one record each: its connections, driver, stand-ins), the shared and bounded agents, idle-room expiry, the per-client counts |
| ``lanes`` | the thinking threads: each a fair queue (rank, then the client that has used the least thinking time), an express thread for cheap clients, queued work dropped when its requester is gone |
| ``limits`` | the per-client limits, timeouts and history bounds (``bigtwo serve --limit NAME=VALUE``), 429 with ``Retry-After`` |
| ``app`` | the ASGI app (Starlette): the page, the JSON API and the rooms' websockets, and the checks at the door |
| ``door`` | the TCP connections: timeouts on slow and idle ones, a cap in all and per address |
| ``server`` | ``bigtwo serve``: uvicorn on localhost, clean shutdown on SIGTERM and Ctrl-C, no token in any log line |
| ``bench`` | ``bigtwo serve-bench``: many rooms of agents and scripted clients at once |
| ``page/`` | the page itself: static HTML, JavaScript and CSS, cards drawn as SVG |

Needs the ``web`` extra: ``pip install 'bigtwo[web]'``.
"""

from bigtwo.layout import second_name

if __name__ != "bigtwo.web":  # ``import bigtwo_web`` from the repository root
    raise second_name(__name__, "bigtwo.web")

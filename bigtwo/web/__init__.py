"""bigtwo.web: play Big Two in the browser (``bigtwo serve``).

| module | job |
|---|---|
| ``room`` | a room's seats, turns, disconnect policy, turn clock and what each seat may see; the create-room form's checks and the web's bounds on agents |
| ``store`` | rooms, matches and every play in SQLite (restarts resume; tokens only hashed; bounded history) |
| ``coach`` | what the strongest shipped agent would play, from one seat's information |
| ``hub`` | every room, its connections and driver, the shared and bounded agents, idle-room expiry, replays, the per-client counts |
| ``lanes`` | the thinking threads: each a fair queue (rank, then clients in turn), queued work dropped when its requester is gone |
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

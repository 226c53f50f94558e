"""bigtwo.web: play Big Two in the browser (``bigtwo serve``).

| module | job |
|---|---|
| ``room`` | a room's seats, turns, disconnect policy, turn clock and what each seat may see; the create-room form's checks and the web's bounds on agents |
| ``store`` | rooms, matches and every play in SQLite (restarts resume; tokens only hashed) |
| ``coach`` | what the strongest shipped agent would play, from one seat's information |
| ``hub`` | every room, its connections and driver, the shared and bounded agents, the worker threads, idle-room expiry, replays |
| ``app`` | the ASGI app (Starlette): the page, the JSON API and the rooms' websockets, and the checks at the door |
| ``server`` | ``bigtwo serve``: uvicorn on localhost, clean shutdown on SIGTERM and Ctrl-C |
| ``bench`` | ``bigtwo serve-bench``: many rooms of agents and scripted clients at once |
| ``page/`` | the page itself: static HTML, JavaScript and CSS, cards drawn as SVG |

Needs the ``web`` extra: ``pip install 'bigtwo[web]'``.
"""

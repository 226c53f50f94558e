"""bigtwo_web: play Big Two in the browser (``bigtwo serve``).

| module | job |
|---|---|
| ``room`` | a room's seats, turns, disconnect policy and what each seat may see |
| ``store`` | rooms, matches and every play in SQLite (restarts resume) |
| ``coach`` | what the strongest shipped agent would play, from one seat's information |
| ``app`` | the ASGI app (Starlette): the page, the JSON API and the rooms' websockets |
| ``server`` | ``bigtwo serve``: uvicorn on localhost, clean shutdown on SIGTERM and Ctrl-C |
| ``bench`` | ``bigtwo serve-bench``: many rooms of agents and scripted clients at once |
| ``page/`` | the page itself: static HTML, JavaScript and CSS, cards drawn as SVG |

Needs the ``web`` extra: ``pip install 'bigtwo[web]'``.
"""

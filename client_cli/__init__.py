"""solrace's terminal client: `solrace` (or `python -m client_cli`).

Modules, from the screen down:
- `__main__` the command line; `commands` the network subcommands (HTTP rooms);
- `play_app` (practice and the base board screen), `race_app`, `watch_app`: Textual apps;
- `widgets` (board view, move line, race bars), `board` and `cards`: drawing;
- `picking`: moves by keys and cursor; `session`: what a board screen plays against;
- `seat` (a room through one socket), `race` (the room as data, fed messages),
  `net` (the reconnecting WebSocket), `memory` (seat tokens on disk);
- `bot`: the solver bot.
"""

__all__: list[str] = []

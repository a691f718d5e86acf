"""Tournaments: a pure state machine (machine.py, scoring.py) and its I/O shell (store,
runner, HTTP and WebSocket handlers). See docs/tournaments.md for the rules players read."""

__all__: list[str] = []

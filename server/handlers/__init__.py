"""The client messages' handlers: one service dispatching to seating, moves, hints and quick
match."""

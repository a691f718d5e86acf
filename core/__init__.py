"""solrace's rules engine: seeded deals, legal moves, apply, undo, autoplay.

Pure Python, no I/O: the server, the terminal client and the solver all use it.
"""

"""The daily deal: one deal a game each UTC day, one ranked attempt a player (docs/protocol.md
section 13)."""

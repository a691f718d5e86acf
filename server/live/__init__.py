"""This process's live rooms: the hub, seat sessions, spectators, departures, recent events,
connections and the live lobby."""

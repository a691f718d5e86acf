"""Players' identity on the server: who a request or a socket acts as (its player key),
names, claiming an account with a password, signing in and out, link codes, and the
limits on sign-in attempts. The records themselves are `records.players.PlayerStore`."""

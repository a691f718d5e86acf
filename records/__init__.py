"""The durable records: players, every finished race, ratings, leaderboards.

Redis holds live state; a race goes here, into a SQL database, when it ends. SQLAlchemy 2's
async core (Table objects, no ORM) over SQLite by default or PostgreSQL for a fleet, with
Alembic migrations shipped in the package (`records/migrations/`, run by `upgrade_to_head`
at server start). `records` may import `core` and `protocol`, never `server`.

- `schema.py`: every table.
- `engine.py`: an async engine from a database URL (SQLite: WAL, busy_timeout, foreign keys).
- `migrate.py`: `upgrade_to_head`, safe when several processes start at once.
- `archive.py`: `RaceArchive`, a finished race with its results and rating updates written
  exactly once; replays by race and by room.
- `ratings.py`: the rating maths (Plackett-Luce, the shown number, provisional, inactivity).
- `boards.py`: the leaderboards (by rating, by best time on a deal; day, week, all time).
- `profiles.py`: what a player's profile shows.
- `players.py`, `names.py`, `keys.py`, `passwords.py`: players, their names, keys and
  passwords.
- `site_secrets.py`: the site's lasting secrets (the daily deal's), made once and kept.
- `sql.py`: SQL that differs between the databases.
"""

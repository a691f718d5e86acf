"""Every table of the records, in one `MetaData` (the migrations build exactly these).

Times are Unix seconds (float), as the server's clock gives them, on every database. Seeds
are decimal text: deals go above 2^63. Player ids are 16 random hex characters, public (they
appear in URLs and payloads); keys and passwords are stored only as hashes.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = [
    "link_codes",
    "metadata",
    "player_keys",
    "player_names",
    "players",
    "race_results",
    "races",
    "rating_history",
    "ratings",
    "site_secrets",
]

# Constraint names that are the same on every database, so that migrations can name them.
metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

Time = sa.Float  # Unix seconds


def _owner() -> sa.Column[str]:
    """The player a row belongs to, gone with them."""
    return sa.Column(
        "player_id", sa.Text, sa.ForeignKey("players.id", ondelete="CASCADE"), nullable=False
    )


players = sa.Table(
    "players",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),  # as typed
    sa.Column("name_key", sa.Text, nullable=False, unique=True),  # casefolded
    sa.Column("is_bot", sa.Boolean, nullable=False, default=False),
    sa.Column("password_hash", sa.Text, nullable=True),  # Argon2id, once claimed
    sa.Column("created_at", Time, nullable=False),
    sa.Column("claimed_at", Time, nullable=True),
    sa.Column("last_seen_at", Time, nullable=False),
)

player_keys = sa.Table(
    "player_keys",
    metadata,
    sa.Column("key_hash", sa.Text, primary_key=True),  # SHA-256 hex of the secret key
    _owner(),
    sa.Column("created_at", Time, nullable=False),
    sa.Column("last_used_at", Time, nullable=False),
    sa.Column("label", sa.Text, nullable=True),
    sa.Index(None, "player_id"),
)

player_names = sa.Table(
    "player_names",
    metadata,
    _owner(),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("name_key", sa.Text, nullable=False),  # records/names.py name_key(name)
    sa.Column("until_at", Time, nullable=False),  # when it stopped being the name
    sa.Index(None, "player_id"),
    sa.Index(None, "name_key"),
)

link_codes = sa.Table(
    "link_codes",
    metadata,
    sa.Column("code_hash", sa.Text, primary_key=True),
    _owner(),
    sa.Column("expires_at", Time, nullable=False),
)

races = sa.Table(
    "races",
    metadata,
    sa.Column("id", sa.Text, primary_key=True),  # "{room}.{round}"
    sa.Column("room", sa.Text, nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("game", sa.Text, nullable=False),
    sa.Column("seed", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),  # room | quick | tournament | daily | ghost
    sa.Column("rated", sa.Boolean, nullable=False),
    sa.Column("tournament", sa.Text, nullable=True),
    sa.Column("t_round", sa.Integer, nullable=True),
    sa.Column("heat", sa.Integer, nullable=True),
    sa.Column("started_at", Time, nullable=False),
    sa.Column("ended_at", Time, nullable=False),
    sa.Column("finish_reason", sa.Text, nullable=False),
    sa.Column("replay", sa.Text, nullable=False),  # NDJSON of core/replay.py
    sa.Column("replay_hash", sa.Text, nullable=False),  # SHA-256 of its last line
    sa.Index(None, "room"),
    sa.Index(None, "game", "ended_at"),
    sa.Index(None, "game", "seed"),
)

race_results = sa.Table(
    "race_results",
    metadata,
    sa.Column("race_id", sa.Text, sa.ForeignKey("races.id", ondelete="CASCADE"), nullable=False),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("player_id", sa.Text, sa.ForeignKey("players.id"), nullable=True),
    sa.Column("name", sa.Text, nullable=False),  # the name shown at the time
    sa.Column("is_bot", sa.Boolean, nullable=False),
    sa.Column("place", sa.Integer, nullable=False),  # 1 = best; ties share
    sa.Column("won", sa.Boolean, nullable=False),
    sa.Column("time_ms", sa.Integer, nullable=True),
    sa.Column("progress", sa.Integer, nullable=False),
    sa.Column("moves", sa.Integer, nullable=False),
    # Whether the seat ended with no legal move, and why it went out ("resigned", "forfeit",
    # a ghost's "ended"), as its RESULT says: null on rows archived before they were kept.
    sa.Column("stuck", sa.Boolean, nullable=True),
    sa.Column("out", sa.Text, nullable=True),
    sa.Column("used_undo", sa.Boolean, nullable=False),
    sa.Column("used_hints", sa.Boolean, nullable=False),
    sa.Column("splits", sa.Text, nullable=True),  # JSON list of ms at each quarter
    sa.Column("rating_before", sa.Integer, nullable=True),
    sa.Column("rating_after", sa.Integer, nullable=True),
    sa.PrimaryKeyConstraint("race_id", "seat"),
    sa.Index(None, "player_id"),
)

ratings = sa.Table(
    "ratings",
    metadata,
    _owner(),
    sa.Column("game", sa.Text, nullable=False),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
    sa.Column("races", sa.Integer, nullable=False),
    sa.Column("last_rated_at", Time, nullable=False),
    sa.PrimaryKeyConstraint("player_id", "game"),
    sa.Index(None, "game", "last_rated_at"),
)

rating_history = sa.Table(
    "rating_history",
    metadata,
    _owner(),
    sa.Column("game", sa.Text, nullable=False),
    sa.Column("race_id", sa.Text, sa.ForeignKey("races.id", ondelete="CASCADE"), nullable=False),
    sa.Column("at", Time, nullable=False),  # when the race ended
    # The player's rated races in the game with this one (1, 2, ...): the order the rating
    # changed in, which is not the races' order when one was archived late.
    sa.Column("change", sa.Integer, nullable=False),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
    sa.Column("display", sa.Integer, nullable=False),
    sa.Index(None, "player_id", "game", "change"),
)

# The site's lasting secrets by name (records/site_secrets.py), hex: made once, never shown.
site_secrets = sa.Table(
    "site_secrets",
    metadata,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
    sa.Column("created_at", Time, nullable=False),
)

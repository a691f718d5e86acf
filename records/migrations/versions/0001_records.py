"""The records: players, their keys and names, races, results, ratings.

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("name_key", sa.Text(), nullable=False),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("claimed_at", sa.Float(), nullable=True),
        sa.Column("last_seen_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
        sa.UniqueConstraint("name_key", name=op.f("uq_players_name_key")),
    )
    op.create_table(
        "races",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("room", sa.Text(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("game", sa.Text(), nullable=False),
        sa.Column("seed", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("tournament", sa.Text(), nullable=True),
        sa.Column("t_round", sa.Integer(), nullable=True),
        sa.Column("heat", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=False),
        sa.Column("finish_reason", sa.Text(), nullable=False),
        sa.Column("replay", sa.Text(), nullable=False),
        sa.Column("replay_hash", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_races")),
    )
    with op.batch_alter_table("races", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_races_game_ended_at"), ["game", "ended_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_races_game_seed"), ["game", "seed"], unique=False)
        batch_op.create_index(batch_op.f("ix_races_room"), ["room"], unique=False)

    op.create_table(
        "link_codes",
        sa.Column("code_hash", sa.Text(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_link_codes_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("code_hash", name=op.f("pk_link_codes")),
    )
    op.create_table(
        "player_keys",
        sa.Column("key_hash", sa.Text(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("last_used_at", sa.Float(), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_player_keys_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("key_hash", name=op.f("pk_player_keys")),
    )
    with op.batch_alter_table("player_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_player_keys_player_id"), ["player_id"], unique=False)

    op.create_table(
        "player_names",
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("until_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_player_names_player_id_players"),
            ondelete="CASCADE",
        ),
    )
    with op.batch_alter_table("player_names", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_player_names_player_id"), ["player_id"], unique=False)

    op.create_table(
        "race_results",
        sa.Column("race_id", sa.Text(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.Text(), nullable=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("time_ms", sa.Integer(), nullable=True),
        sa.Column("progress", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("used_undo", sa.Boolean(), nullable=False),
        sa.Column("used_hints", sa.Boolean(), nullable=False),
        sa.Column("splits", sa.Text(), nullable=True),
        sa.Column("rating_before", sa.Integer(), nullable=True),
        sa.Column("rating_after", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_race_results_player_id_players")
        ),
        sa.ForeignKeyConstraint(
            ["race_id"],
            ["races.id"],
            name=op.f("fk_race_results_race_id_races"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("race_id", "seat", name=op.f("pk_race_results")),
    )
    with op.batch_alter_table("race_results", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_race_results_player_id"), ["player_id"], unique=False)

    op.create_table(
        "rating_history",
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("game", sa.Text(), nullable=False),
        sa.Column("race_id", sa.Text(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("display", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_rating_history_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["race_id"],
            ["races.id"],
            name=op.f("fk_rating_history_race_id_races"),
            ondelete="CASCADE",
        ),
    )
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_rating_history_player_id_game_at"),
            ["player_id", "game", "at"],
            unique=False,
        )

    op.create_table(
        "ratings",
        sa.Column("player_id", sa.Text(), nullable=False),
        sa.Column("game", sa.Text(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.Column("last_rated_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"],
            ["players.id"],
            name=op.f("fk_ratings_player_id_players"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("player_id", "game", name=op.f("pk_ratings")),
    )
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_ratings_game_last_rated_at"), ["game", "last_rated_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("ratings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ratings_game_last_rated_at"))

    op.drop_table("ratings")
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rating_history_player_id_game_at"))

    op.drop_table("rating_history")
    with op.batch_alter_table("race_results", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_race_results_player_id"))

    op.drop_table("race_results")
    with op.batch_alter_table("player_names", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_player_names_player_id"))

    op.drop_table("player_names")
    with op.batch_alter_table("player_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_player_keys_player_id"))

    op.drop_table("player_keys")
    op.drop_table("link_codes")
    with op.batch_alter_table("races", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_races_room"))
        batch_op.drop_index(batch_op.f("ix_races_game_seed"))
        batch_op.drop_index(batch_op.f("ix_races_game_ended_at"))

    op.drop_table("races")
    op.drop_table("players")

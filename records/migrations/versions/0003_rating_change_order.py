"""The rating history's order: each change's number among the player's rated races in the
game (`change`), the order the rating changed in, where the races' end times are not (a race
archived late). Existing rows are numbered by the races' end times, as they were listed.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.add_column(sa.Column("change", sa.Integer(), nullable=True))
    op.execute(
        "UPDATE rating_history SET change = (SELECT COUNT(*) FROM rating_history AS h"
        " WHERE h.player_id = rating_history.player_id AND h.game = rating_history.game"
        " AND (h.at < rating_history.at"
        " OR (h.at = rating_history.at AND h.race_id <= rating_history.race_id)))"
    )
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.alter_column("change", existing_type=sa.Integer(), nullable=False)
        batch_op.drop_index(batch_op.f("ix_rating_history_player_id_game_at"))
        batch_op.create_index(
            batch_op.f("ix_rating_history_player_id_game_change"),
            ["player_id", "game", "change"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rating_history_player_id_game_change"))
        batch_op.create_index(
            batch_op.f("ix_rating_history_player_id_game_at"),
            ["player_id", "game", "at"],
            unique=False,
        )
        batch_op.drop_column("change")

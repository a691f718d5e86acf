"""A former name's key (`player_names.name_key`, indexed), so that a link under a name a
player gave up finds them (GET /players/{name}) in any case, as a name now is found.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from records.names import name_key

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("player_names", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name_key", sa.Text(), nullable=True))
    names = sa.table(
        "player_names",
        sa.column("player_id", sa.Text),
        sa.column("name", sa.Text),
        sa.column("name_key", sa.Text),
    )
    bind = op.get_bind()
    # The key is records/names.py's rule, not SQL's lower(): one place decides it.
    for (name,) in bind.execute(sa.select(names.c.name).distinct()).all():
        bind.execute(names.update().where(names.c.name == name).values(name_key=name_key(name)))
    with op.batch_alter_table("player_names", schema=None) as batch_op:
        batch_op.alter_column("name_key", existing_type=sa.Text(), nullable=False)
        batch_op.create_index(batch_op.f("ix_player_names_name_key"), ["name_key"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("player_names", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_player_names_name_key"))
        batch_op.drop_column("name_key")

"""A seat's `stuck` and `out` in the archive, so that an expired room's results answer as
its live RESULT did (GET /rooms/{id}/results). Rows archived before have neither (null):
the server reads `stuck` from the race's replay and answers `out` null for them.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("race_results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stuck", sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column("out", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("race_results", schema=None) as batch_op:
        batch_op.drop_column("out")
        batch_op.drop_column("stuck")

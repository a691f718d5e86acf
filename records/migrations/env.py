"""Alembic's environment: migrations run on the connection `records.migrate` hands in
(inside its locked transaction); there is no alembic.ini and no offline mode."""

from __future__ import annotations

from alembic import context

from records.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through records.migrate.upgrade_to_head")
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters by copying
)
with context.begin_transaction():
    context.run_migrations()

"""SQL that differs between the databases, written once."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["insert_ignore"]


def insert_ignore(conn: AsyncConnection, table: sa.Table) -> Any:
    """`INSERT ... ON CONFLICT DO NOTHING` on the connection's database."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing()
    return sqlite.insert(table).on_conflict_do_nothing()

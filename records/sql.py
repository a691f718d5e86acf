"""SQL that differs between the databases, written once."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["insert_ignore", "storable"]


def insert_ignore(conn: AsyncConnection, table: sa.Table) -> Any:
    """`INSERT ... ON CONFLICT DO NOTHING` on the connection's database."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing()
    return sqlite.insert(table).on_conflict_do_nothing()


def storable(text: str) -> bool:
    """Whether both databases can hold `text`: PostgreSQL's text has no NUL, and a lone
    surrogate (JSON's `"\\ud800"`) is no UTF-8 that a driver could send. A lookup of text
    that is not storable finds nothing, rather than failing in the driver."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True

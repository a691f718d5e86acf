"""Records databases for tests: `scratch_database_url()`, this test run's SQLite, for the
servers a test starts without a database of its own, so that no test writes into `.data/`
(the records of `make run`). PostgreSQL: `support.own_postgres`."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile

__all__ = ["scratch_database_url"]


@functools.cache
def scratch_database_url() -> str:
    """A SQLite records database for this test run, removed at its end."""
    folder = tempfile.mkdtemp(prefix="solrace-test-records-")
    atexit.register(shutil.rmtree, folder, True)
    return f"sqlite+aiosqlite:///{folder}/records.sqlite3"

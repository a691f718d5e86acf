"""Records databases for tests: `scratch_database_url()`, the running test's SQLite, for the
servers a test starts without a database of its own, so that no test writes into `.data/`
(the records of `make run`). PostgreSQL: `support.own_postgres`."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

__all__ = ["scratch_database_url"]


def scratch_database_url() -> str:
    """A SQLite records database for the test running now: the same for every server it
    starts (in its fixtures too), a new one for the next test, all removed at the run's
    end. One database for a whole run let a test's players meet the next test's servers
    (a name registered in one was a player's name in another)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rpartition(" (")[0]
    return _database_of(test)


@functools.cache
def _database_of(test: str) -> str:
    folder = tempfile.mkdtemp(prefix="solrace-test-records-")
    atexit.register(shutil.rmtree, folder, True)
    return f"sqlite+aiosqlite:///{folder}/records.sqlite3"

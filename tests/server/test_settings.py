import pytest

from server.settings import FIELDS, Settings, SettingsError


def test_defaults() -> None:
    s = Settings()
    assert (s.host, s.port, s.redis_url) == ("127.0.0.1", 8765, None)


def test_from_env_reads_prefixed_and_short_names() -> None:
    s = Settings.from_env(
        {"SOLRACE_PORT": "9000", "REDIS_URL": "redis://x:1/0", "SOLRACE_GRACE": "2.5"}
    )
    assert (s.port, s.redis_url, s.grace) == (9000, "redis://x:1/0", 2.5)


def test_the_host_comes_from_solrace_host_never_from_a_shell_host() -> None:
    # tcsh exports HOST (the machine's name) to every process: listening there by accident
    # would open the server beyond loopback.
    assert Settings.from_env({"HOST": "buildbox", "PORT": "9001"}).host == "127.0.0.1"
    assert Settings.from_env({"SOLRACE_HOST": "0.0.0.0"}).host == "0.0.0.0"
    assert Settings.from_env({"PORT": "9001"}).port == 9001


def test_overrides_win_and_none_overrides_are_ignored() -> None:
    s = Settings.from_env({"PORT": "9000"}, port=1234, host=None)
    assert (s.port, s.host) == (1234, "127.0.0.1")


def test_bad_values_are_refused() -> None:
    with pytest.raises(SettingsError):
        Settings.from_env({"SOLRACE_PORT": "many"})
    with pytest.raises(SettingsError):
        Settings(max_frame=0)


def test_every_field_has_help() -> None:
    assert all(f.metadata["help"] for f in FIELDS)


def test_the_records_default_to_sqlite_in_the_data_folder() -> None:
    settings = Settings(data_dir="/srv/solrace")
    assert settings.records_url == "sqlite+aiosqlite:////srv/solrace/records.sqlite3"
    url = "postgresql+asyncpg://solrace:pw@db/solrace"
    assert Settings.from_env({"SOLRACE_DATABASE_URL": url}).records_url == url


@pytest.mark.parametrize("url", ["mysql://db/x", "not a url", "sqlite+pysqlcipher:///x"])
def test_a_database_the_records_cannot_run_on_is_refused(url: str) -> None:
    with pytest.raises(SettingsError, match="database_url"):
        Settings(database_url=url)

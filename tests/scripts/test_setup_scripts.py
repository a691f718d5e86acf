"""scripts/ensure-redis-server on a machine where redis-server cannot be installed: it
says what to do instead (set REDIS_URL) rather than "sudo: command not found"."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest
from support.paths import ROOT

SCRIPT = ROOT / "scripts" / "ensure-redis-server"
BASH = "/bin/bash"


def bare_path(tmp_path: pathlib.Path, uid: int, apt: bool) -> str:
    """A PATH with no redis-server, no sudo, `id -u` printing `uid`, apt-get if `apt`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(BASH)  # the scripts run `/usr/bin/env bash`
    fake_id = bin_dir / "id"
    fake_id.write_text(f"#!{BASH}\necho {uid}\n")
    fake_id.chmod(0o755)
    if apt:
        fake_apt = bin_dir / "apt-get"
        fake_apt.write_text(f"#!{BASH}\necho 'E: permission denied' >&2\nexit 100\n")
        fake_apt.chmod(0o755)
    return str(bin_dir)


def ensure(
    tmp_path: pathlib.Path, uid: int, apt: bool, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {"PATH": bare_path(tmp_path, uid, apt), "HOME": str(tmp_path), **env}
    return subprocess.run(
        [BASH, str(SCRIPT)], env=environ, capture_output=True, text=True, timeout=30
    )


@pytest.mark.parametrize(
    ("uid", "apt", "why"),
    [
        (1000, True, "not root and no sudo"),
        (1000, False, "no apt-get"),
        (0, False, "no apt-get"),
        (0, True, "apt-get failed"),
    ],
)
def test_no_way_to_install_says_to_set_redis_url(
    tmp_path: pathlib.Path, uid: int, apt: bool, why: str
) -> None:
    done = ensure(tmp_path, uid, apt)
    assert done.returncode == 1
    assert "command not found" not in done.stderr
    assert why in done.stderr
    assert "REDIS_URL=redis://" in done.stderr and "make run" in done.stderr


def test_the_test_suite_needs_the_binary_whatever_redis_url_says(tmp_path: pathlib.Path) -> None:
    done = ensure(tmp_path, 1000, False, REDIS_URL="redis://r:6379", SOLRACE_NEED_REDIS_BINARY="1")
    assert done.returncode == 1 and "command not found" not in done.stderr
    assert "The test suite starts its own redis-server" in done.stderr


def test_with_redis_url_nothing_is_installed(tmp_path: pathlib.Path) -> None:
    assert ensure(tmp_path, 1000, False, REDIS_URL="redis://r:6379").returncode == 0
    assert os.access(SCRIPT, os.X_OK)

"""deploy/solrace@.service: the units it names exist where it says they do (Debian's), and
`systemd-analyze verify` accepts it (where systemd's tools are installed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.balancers import DEPLOY
from support.paths import ROOT

UNIT = DEPLOY / "solrace@.service"
UNIT_DIRS = (Path("/lib/systemd/system"), Path("/usr/lib/systemd/system"))


def _named(key: str) -> list[str]:
    """The units a `Key=` line of the unit names (every such line, space-separated)."""
    names: list[str] = []
    for line in UNIT.read_text().splitlines():
        if line.startswith(f"{key}="):
            names += line.split("=", 1)[1].split()
    return names


def test_the_unit_starts_after_debian_s_redis_server_unit() -> None:
    if not any((d / "redis-server.service").exists() for d in UNIT_DIRS):
        pytest.skip("no redis-server unit from Debian's package on this machine")
    after = _named("After")
    assert "redis-server.service" in after, after
    for name in after:
        if name.endswith(".service"):
            assert any((d / name).exists() for d in UNIT_DIRS), f"After= names {name}: no such unit"


def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # The unit as installed at /opt/solrace, pointed at this checkout (verify checks that
    # ExecStart's program exists).
    text = UNIT.read_text()
    text = text.replace("/opt/solrace/.venv/bin/python", sys.executable)
    text = text.replace("WorkingDirectory=/opt/solrace", f"WorkingDirectory={ROOT}")
    (tmp_path / UNIT.name).write_text(text)
    check = subprocess.run(
        [analyze, "verify", str(tmp_path / "solrace@8801.service")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert check.returncode == 0 and not check.stderr.strip(), check.stdout + check.stderr

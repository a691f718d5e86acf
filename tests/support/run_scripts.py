"""The deploy scripts (deploy/run-local.sh, run-cluster-local.sh) as a test runs them."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

__all__ = ["kill_all"]


def kill_all(script: subprocess.Popen[bytes], log: Path) -> None:
    """The script and everything it started, if still running (after a failed test)."""
    if script.poll() is None:
        os.killpg(script.pid, signal.SIGKILL)
        script.wait(10)
    # Redis and the servers have sessions of their own: not in the group killed above.
    started = r"(?:Redis|server) on port \d+ started \(pid (\d+)"
    for pid in re.findall(started, log.read_text()):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)

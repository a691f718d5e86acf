"""Where the project's files are, for tests that read or run them."""

from pathlib import Path

__all__ = ["ROOT"]

ROOT = Path(__file__).resolve().parents[2]

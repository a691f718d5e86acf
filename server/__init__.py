"""solrace's race server (aiohttp + Redis). The wire protocol is the top-level `protocol`
package, shared with the clients."""

from __future__ import annotations

# First: importing it chooses the build of the server's compiled modules (core/build.py),
# whichever of them is imported first.
from core import build as _build  # noqa: F401

"""Helpers shared by the test modules: each written once here, imported as `support.NAME`.
The fixtures built on them live in tests/conftest.py."""

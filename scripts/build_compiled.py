"""The compiled build of the move path (core/build.py lists its modules), for
scripts/build-compiled: mypyc compiles each in place, an extension module beside its
source, and their shared runtime as `core.move_path__mypyc` inside the core package (a
top-level one would be found only from the repository's root)."""

from __future__ import annotations

from mypyc.build import mypycify
from setuptools import setup

from core.build import COMPILED_MODULES

setup(
    name="solrace-move-path",
    packages=[],
    py_modules=[],
    ext_modules=mypycify(
        [m.replace(".", "/") + ".py" for m in COMPILED_MODULES], group_name="core.move_path"
    ),
    script_args=["build_ext", "--inplace", "--build-temp", "build/mypyc"],
)

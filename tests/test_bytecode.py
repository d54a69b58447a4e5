"""What ``python -m bot`` imports is compiled on disk: where PYTHONDONTWRITEBYTECODE is set (CI,
containers) Python writes no ``.pyc``, so a module without one is compiled again in every
process, and uv installs none unless asked (``scripts/install.sh`` passes
``--compile-bytecode``; ``make`` compiles our own packages before it runs or tests)."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_installed_module_the_bot_imports_has_its_bytecode_on_disk() -> None:
    importlib.import_module("bot.__main__")
    files = [getattr(m, "__file__", None) for m in list(sys.modules.values())]
    installed = [
        Path(f) for f in files if f and f.endswith(".py") and "site-packages" in Path(f).parts
    ]
    assert len(installed) > 100
    missing = [f for f in installed if not Path(importlib.util.cache_from_source(str(f))).exists()]
    assert not missing, f"{len(missing)} modules without .pyc, e.g. {missing[:3]}: make install"


def test_the_installer_and_make_compile_ahead() -> None:
    assert "--compile-bytecode" in (ROOT / "scripts" / "install.sh").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "compileall" in makefile
    for target in ("run:", "test:", "test-fast:"):
        recipe = makefile.split(f"\n{target}", 1)[1].split("\n\n", 1)[0]
        assert "$(COMPILE)" in recipe, target

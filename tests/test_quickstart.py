"""``quickstart.py`` is the runtime page's quick start as written (``docs/runtime.md``, which the
README links), and prints what the page shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "runtime.md").read_text()
SECTION = PAGE[PAGE.index("## Quick start") : PAGE.index("## What else")]


def _block(language: str, after: str = "") -> str:
    found = re.search(rf"{after}```{language}\n(.*?)```", SECTION, re.S)
    assert found, f"no ```{language} block in the quick start"
    return found.group(1)


def test_quickstart_py_is_the_readmes_code_as_written() -> None:
    script = (ROOT / "quickstart.py").read_text()
    docstring, _, code = script.partition('"""\n\n')
    assert docstring.startswith('"""')
    assert code == _block("python")


def test_quickstart_py_prints_the_readmes_output(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "quickstart.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    expected = _block("", after="Output:\n\n").strip().splitlines()
    lines = done.stdout.strip().splitlines()
    assert len(lines) == len(expected), done.stdout
    for line, shown in zip(lines, expected, strict=True):
        pattern = ".+".join(re.escape(part) for part in shown.split("…"))
        assert re.fullmatch(pattern, line), (line, shown)

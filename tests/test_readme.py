"""The README's quick start runs exactly as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_quick_start_runs_as_written(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    script = tmp_path / "quickstart.py"
    script.write_text(code.group(1))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "needs approval: delete-record {'id': 'abc-123'}" in done.stdout
    assert done.stdout.strip().endswith("Deleted abc-123.")


def test_the_readme_shows_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme and "make test" in readme


def test_the_readme_own_agent_example_builds_an_agent_bot_agent_can_serve(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Your own agent and tools", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "myops.py", "exec"), namespace)
    from agents import Agent

    agent = namespace["agent"]
    assert isinstance(agent, Agent)
    assert agent.tools["restart-service"].require_approval is True
    assert agent.model.model_id == "openai/gpt-5-mini"

"""The samples of the README and of the pages it links (``docs/*.md``) run exactly as written:
the runtime's quick start, the ``BOT_AGENT`` module (with a model key and on the offline model),
the HTTP API's curl calls and the Python client sample (these against a bot started here, with
``API_TOKEN`` set), the TOML files. Blocks are found by what they contain, not by the prose
around them."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.bot.bot_process import BotProcess, serve_bot_process

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The README and the pages it links, where samples live."""


def test_the_runtime_quick_start_runs_as_written(tmp_path: Path) -> None:
    runtime = (ROOT / "docs" / "runtime.md").read_text()
    section = runtime.split("## Quick start", 1)[1]
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
    section = readme.split("## Your own agent, tools and MCP servers", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "myops.py", "exec"), namespace)
    from agents import Agent

    agent = namespace["agent"]
    assert isinstance(agent, Agent)
    assert agent.tools["restart-service"].require_approval is True
    assert agent.model.model_id == "openai/gpt-5-mini"


# -- the HTTP API samples and the BOT_AGENT module, against a bot started here --------------------
TOKEN = "readme-service-token"
"""The bot's ``API_TOKEN`` (the service token: this test lists runs with it)."""
PERSON_TOKEN = "readme-person-token"
"""A per-person token (``API_TOKENS``) of U0SAM: the samples' own token decides as sam."""
README_URL = "http://127.0.0.1:3000"
"""Where the README's samples talk to (``make run``'s address); the test's bot has its own."""


def _blocks(language: str) -> list[str]:
    """Every ``language`` code block of the README and its pages (indented ones too)."""
    found: list[str] = []
    for page in PAGES:
        for indent, block in re.findall(
            rf"^( *)```{language}\n(.*?)^ *```", page.read_text(), re.S | re.M
        ):
            found.append(re.sub(rf"^{indent}", "", block, flags=re.M))
    return found


def _block(language: str, marker: str) -> str:
    """The one ``language`` code block of the README and its pages that contains ``marker``."""
    [found] = [b for b in _blocks(language) if marker in b]
    return found


def _commands(block: str) -> list[str]:
    """The shell commands of a block (a trailing backslash continues a command)."""
    return [c.strip() for c in re.split(r"(?<!\\)\n", block.strip()) if c.strip()]


def _token_names(block: str) -> set[str]:
    """The environment variables a sample reads its token from (``$MY_TOKEN``, ``os.environ``)."""
    names = re.findall(r"\$\{?([A-Z][A-Z0-9_]*)", block)
    names += re.findall(r"os\.environ\[\"([A-Z][A-Z0-9_]*)\"\]", block)
    return set(names)


def _env(**extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "API_"))}
    return {
        **keep,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "LOG_LEVEL": "WARNING",
        **extra,
    }


@asynccontextmanager
async def _served(tmp_path: Path, **extra: str) -> AsyncIterator[BotProcess]:
    """``python -m bot`` (the local workspace: no Slack token) with ``API_TOKEN`` set, and
    ``API_TOKENS`` holding sam's token."""
    tokens = tmp_path / "api-tokens.toml"
    digest = hashlib.sha256(PERSON_TOKEN.encode()).hexdigest()
    tokens.write_text(f'[[tokens]]\nuser = "U0SAM"\nsha256 = "{digest}"\n')
    env = _env(
        API_TOKEN=TOKEN,
        API_TOKENS=str(tokens),
        STORAGE_URL=f"sqlite+aiosqlite:///{tmp_path / 'readme.db'}",
        **extra,
    )
    async with serve_bot_process(env, tmp_path) as bot:
        yield bot


async def _pending_delete(bot: BotProcess) -> dict[str, Any]:
    """Ask the local workspace to delete record 42; the run waiting for approval (API JSON)."""
    [run] = await _pending(bot, "delete record 42")
    return run


async def _pending(bot: BotProcess, *texts: str) -> list[dict[str, Any]]:
    """Post each of ``texts`` in the local workspace; the runs that then wait (API JSON), once
    there is one for each."""
    for text in texts:
        message = {"user": "U0ALEX", "text": text}
        async with bot.http.post(f"{bot.url}/_local/messages", json=message) as response:
            assert response.status == 200, await response.text()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for _ in range(200):
        async with bot.http.get(
            f"{bot.url}/api/agents/ops/suspended-runs", headers=headers
        ) as response:
            assert response.status == 200, await response.text()
            runs: list[dict[str, Any]] = (await response.json())["runs"]
        if len(runs) == len(texts):
            return runs
        await asyncio.sleep(0.05)
    raise AssertionError(f"not one waiting run for each of {texts}")


def _run(argv: list[str], cwd: Path, tokens: set[str]) -> str:
    """Run ``argv`` with sam's token in each variable of ``tokens``; its output (it must
    succeed)."""
    env = _env(**dict.fromkeys(tokens, PERSON_TOKEN))
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def _shell(command: str, bot: BotProcess, cwd: Path) -> str:
    """A README shell command, run by bash against ``bot`` (off the event loop)."""
    argv = ["bash", "-c", command.replace(README_URL, bot.url)]
    return await asyncio.to_thread(_run, argv, cwd, _token_names(command))


async def test_the_readme_curl_calls_list_and_approve_as_written(tmp_path: Path) -> None:
    commands = _commands(_block("bash", "curl "))
    [listing] = [c for c in commands if "/suspended-runs" in c]
    [approval] = [c for c in commands if "/approve-tool-call" in c]
    async with _served(tmp_path) as bot:
        run = await _pending_delete(bot)
        listed = json.loads(await _shell(listing, bot, tmp_path))
        assert [r["runId"] for r in listed["runs"]] == [run["runId"]]
        [call] = listed["runs"][0]["toolCalls"]
        filled = (
            approval.replace("<run id>", run["runId"])
            .replace("<call id>", call["toolCallId"])
            .replace("<fingerprint>", call["fingerprint"])
        )
        answer = json.loads(await _shell(filled, bot, tmp_path))
        assert answer["status"] == "accepted" and "record 42" in answer["text"]
        assert json.loads(await _shell(listing, bot, tmp_path))["runs"] == []


async def test_the_readme_python_client_sample_runs_as_written(tmp_path: Path) -> None:
    """It approves what waits for approval and leaves a pending question (a ticket that asks
    for its priority with ``suspend()``) for someone to answer, without crashing on it."""
    sample = _block("python", "from bot.client import Client")
    script = tmp_path / "approve_waiting.py"
    async with _served(tmp_path) as bot:
        script.write_text(sample.replace(README_URL, bot.url))
        runs = await _pending(bot, "open a ticket about the printer", "delete record 42")
        [approval] = [c for r in runs for c in r["toolCalls"] if c["requiresApproval"]]
        [question] = [c for r in runs for c in r["toolCalls"] if not c["requiresApproval"]]
        argv = [sys.executable, str(script)]
        output = await asyncio.to_thread(_run, argv, tmp_path, _token_names(sample))
        assert output.splitlines() == [f"approved {approval['toolName']} {approval['args']}"]
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with bot.http.get(
            f"{bot.url}/api/agents/ops/suspended-runs", headers=headers
        ) as response:
            left = (await response.json())["runs"]
        assert [c["toolCallId"] for r in left for c in r["toolCalls"]] == [question["toolCallId"]]


def _bot_agent_command(first: str) -> dict[str, str]:
    """The settings of the README's one ``... make run`` command that starts with ``first``
    (``BOT_AGENT=``, ``MODEL=``)."""
    commands = [c for b in _blocks("sh") for c in _commands(b) if c.startswith(first)]
    [command] = [c for c in commands if "BOT_AGENT=" in c]
    *settings, make, run = command.split()
    assert (make, run) == ("make", "run")  # make run installs, then starts python -m bot
    return dict(setting.split("=", 1) for setting in settings)


async def test_the_readme_bot_agent_module_is_served_by_python_m_bot(tmp_path: Path) -> None:
    module = _block("python", "# myops.py")
    (tmp_path / "myops.py").write_text(module)
    settings = _bot_agent_command("BOT_AGENT=")
    assert settings == {"BOT_AGENT": "myops:agent"}
    async with _served(tmp_path, **settings) as bot:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with bot.http.get(
            f"{bot.url}/api/agents/ops/suspended-runs", headers=headers
        ) as response:
            assert response.status == 200, await response.text()
        async with bot.http.get(f"{bot.url}/_local/state") as response:
            state = await response.json()
        assert state["model"] == "OpenAI gpt-5-mini"  # the module's agent, not the demo's
        answer = await _answer(bot, "restart the web service", until="OPENAI_API_KEY")
    assert bot.returncode == 0, bot.stderr
    assert "OPENAI_API_KEY" in answer and "MODEL_ERROR" not in answer  # what to fix, in the thread
    assert "has no storage" not in bot.stderr  # the bot gives the module's agent its storage
    assert "Traceback" not in bot.stderr  # a missing key is no crash


async def test_the_tours_offline_command_gates_your_own_tool_without_a_key(
    tmp_path: Path,
) -> None:
    """The tour's step: ``MODEL=offline BOT_AGENT=myops:agent make run``, then the README's
    ``/call`` command; the module's tool waits for approval with the arguments given."""
    (tmp_path / "myops.py").write_text(_block("python", "# myops.py"))
    settings = _bot_agent_command("MODEL=")
    assert settings == {"MODEL": "offline", "BOT_AGENT": "myops:agent"}
    readme = (ROOT / "README.md").read_text()
    [call] = re.findall(r"Post `(/call [^`]+)`", readme)
    async with _served(tmp_path, **settings) as bot:
        [run] = await _pending(bot, call)
    [pending] = run["toolCalls"]
    assert (pending["toolName"], pending["args"]) == ("restart-service", {"service": "web"})
    assert pending["requiresApproval"] is True
    assert "Traceback" not in bot.stderr


async def _answer(bot: BotProcess, text: str, *, until: str) -> str:
    """Post ``text`` in the local workspace as alex; the bot's answers in its thread, once one
    says ``until`` (or after 20 s)."""
    async with bot.http.post(
        f"{bot.url}/_local/messages", json={"user": "U0ALEX", "text": text}
    ) as response:
        assert response.status == 200, await response.text()
        ts = (await response.json())["ts"]
    answers = ""
    for _ in range(400):
        async with bot.http.get(f"{bot.url}/_local/state", params={"user": "U0ALEX"}) as response:
            messages = (await response.json())["messages"]
        answers = "\n".join(m["text"] for m in messages if m["thread_ts"] == ts and m["ts"] != ts)
        if until in answers:
            return answers
        await asyncio.sleep(0.05)
    return answers


def test_every_toml_sample_is_a_valid_policy_or_tokens_file(tmp_path: Path) -> None:
    from bot.policy import read_policy
    from bot.policy._tokens import token_file_problems

    blocks = _blocks("toml")
    assert len(blocks) >= 8
    for n, block in enumerate(blocks):
        if not re.search(r"^\s*\[", block, re.M):  # a rule's keys, shown alone
            block = '[[rules]]\ntools = ["refund"]\n' + block
        path = tmp_path / f"sample-{n}.toml"
        path.write_text(block)
        if "[[tokens]]" in block:  # the API tokens file (API_TOKENS)
            assert not isinstance(token_file_problems(path), list), token_file_problems(path)
        else:
            read_policy(path)  # raises, naming every problem, when a sample is not valid

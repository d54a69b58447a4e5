"""The container files hold together without a container engine: the ``Dockerfile`` copies what
exists and is not ignored, installs exactly the lock's pins (hashed, no dev tools), runs as a
non-root user and checks ``/healthz``; ``compose.yaml`` runs two bots on one PostgreSQL and one
Redis with settings the bot reads. (Building the image needs an engine and a base image: the
README says how; a machine without a registry makes the base with scripts/debian-base.sh.)"""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import yaml

from bot._settings import describe_variables
from bot.slack.receiving._app import HEALTH_PATH

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` per instruction, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    lines = [line.strip() for line in joined.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def test_every_copied_path_exists_and_reaches_the_builder() -> None:
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    rules = [r.strip() for r in ignore if r.strip() and not r.startswith("#")]
    copies = [args.split()[:-1] for kind, args in _instructions() if kind == "COPY"]
    assert copies
    for sources in copies:
        for source in sources:
            assert (ROOT / source).exists(), source
            included = False
            for rule in rules:  # the last matching rule wins, as in .dockerignore
                negated = rule.startswith("!")
                pattern = rule.removeprefix("!").rstrip("/")
                if fnmatch(source.rstrip("/"), pattern):
                    included = negated
            assert included, f"{source} is left out by .dockerignore"


def test_the_image_installs_the_locked_run_dependencies_with_hashes() -> None:
    runs = " ".join(args for kind, args in _instructions() if kind == "RUN")
    assert "--require-hashes -r /app/requirements/run.txt" in runs and "--no-deps" in runs


def test_it_runs_as_a_user_that_is_not_root_and_checks_healthz() -> None:
    users = [args for kind, args in _instructions() if kind == "USER"]
    assert users and users[-1] not in ("root", "0")
    [check] = [args for kind, args in _instructions() if kind == "HEALTHCHECK"]
    assert "/healthz" in check and HEALTH_PATH == "/healthz"
    [command] = [args for kind, args in _instructions() if kind == "CMD"]
    assert '"-m", "bot"' in command


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return loaded


def test_compose_runs_two_bots_on_one_postgres_and_one_redis() -> None:
    services = _compose()["services"]
    bot = services["bot"]
    assert bot["build"] == "." and bot["deploy"]["replicas"] == 2
    assert set(bot["depends_on"]) == {"postgres", "redis"}
    env = bot["environment"]
    storage, redis = env["STORAGE_URL"], env["REDIS_URL"]
    assert storage.startswith("postgresql+asyncpg://") and "@postgres:5432/" in storage
    assert redis.startswith("redis://redis:6379/")
    user, password = storage.split("://", 1)[1].split("@", 1)[0].split(":")
    pg = services["postgres"]["environment"]
    assert (pg["POSTGRES_USER"], pg["POSTGRES_PASSWORD"]) == (user, password)
    assert storage.rsplit("/", 1)[1] == pg["POSTGRES_DB"]


def test_compose_sets_only_variables_the_bot_reads() -> None:
    known = {name for name, _, _ in describe_variables()}
    env = _compose()["services"]["bot"]["environment"]
    assert set(env) <= known, set(env) - known


def test_the_image_compiles_its_sources_before_it_drops_root() -> None:
    """The non-root user cannot write ``__pycache__``: compiled at build time, or every start
    compiles every module of ours again (most of the start-up's CPU)."""
    steps = _instructions()
    kinds = [kind for kind, _ in steps]
    compiling = [
        i for i, (kind, args) in enumerate(steps) if kind == "RUN" and "compileall" in args
    ]
    assert compiling, "RUN python3 -m compileall over the copied packages"
    [_, args] = steps[compiling[0]]
    copied = [a.split()[-1] for k, a in steps if k == "COPY" and "/app/" in a.split()[-1]]
    for package in (c for c in copied if not c.startswith("/app/requirements")):
        assert package in args, f"{package} is copied but not compiled"
    assert compiling[0] < kinds.index("USER")

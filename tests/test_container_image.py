"""The image builds and serves: ``podman build`` of the ``Dockerfile`` on a base made from
Debian's packages (``scripts/debian-base.sh``; no registry is reachable here), then the image's
own filesystem started as its non-root user with its own command until ``/healthz`` answers,
and its ``HEALTHCHECK`` command run against it.

The image is started with ``chroot`` into its mounted filesystem, not ``podman run``: this
sandbox refuses the OCI runtime's ``setrlimit`` (``crun: setrlimit RLIMIT_NOFILE: Operation
not permitted``), so what is checked is everything but the runtime's isolation: the locked
dependencies installed with hashes, the copied code, the user, the working directory and the
command. ``.ci/run`` installs podman and debootstrap, so CI never skips it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASE = "localhost/countersign-base:bookworm"
IMAGE = "localhost/countersign:test"
CONTAINER = "countersign-image-test"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
"""The machine's CA bundle, handed to the build: this sandbox's proxy re-signs TLS."""

pytestmark = [
    pytest.mark.processes,
    pytest.mark.serial,  # builds an image: podman's storage is the machine's
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("podman") is None or shutil.which("debootstrap") is None,
        reason="needs podman and debootstrap (apt-get install -y podman debootstrap)",
    ),
]


def _podman(*args: str, timeout: float = 600) -> str:
    done = subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"podman {shlex.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def image_root() -> Iterator[Path]:
    """The built image's filesystem, mounted (removed again afterwards)."""
    if subprocess.run(["podman", "image", "exists", BASE], check=False).returncode != 0:
        subprocess.run(
            [str(ROOT / "scripts" / "debian-base.sh"), "podman"],
            check=True,
            capture_output=True,
            timeout=900,
        )
    # --format docker: an OCI image has no HEALTHCHECK.
    build = ["build", "--format", "docker", "--isolation=chroot", "--build-arg", f"BASE={BASE}"]
    build += ["-t", IMAGE]
    if HOST_CA.exists():
        build += [
            "-v",
            f"{HOST_CA}:/run/host-ca.crt:ro",
            "--build-arg",
            "PIP_CERT=/run/host-ca.crt",
        ]
    _podman(*build, str(ROOT), timeout=900)
    subprocess.run(["podman", "rm", "-f", CONTAINER], capture_output=True, check=False)
    _podman("create", "--name", CONTAINER, IMAGE)
    try:
        yield Path(_podman("mount", CONTAINER))
    finally:
        subprocess.run(["podman", "umount", CONTAINER], capture_output=True, check=False)
        subprocess.run(["podman", "rm", "-f", CONTAINER], capture_output=True, check=False)


def _config() -> dict[str, object]:
    [inspected] = json.loads(_podman("image", "inspect", IMAGE))
    config = inspected["Config"]
    assert isinstance(config, dict)
    return {**config, "Healthcheck": inspected.get("Healthcheck")}


def _in_image(root: Path, config: dict[str, object], command: list[str], **env: str) -> list[str]:
    """``command`` as the image would run it: its user, working directory and environment."""
    image_env = dict(item.split("=", 1) for item in config.get("Env", []))  # type: ignore[union-attr]
    words = [f"{k}={v}" for k, v in {**image_env, **env}.items()]
    user = str(config.get("User"))
    workdir = str(config.get("WorkingDir"))
    inner = f"cd {shlex.quote(workdir)} && exec env {shlex.join(words)} {shlex.join(command)}"
    return ["/usr/sbin/chroot", f"--userspec={user}:{user}", str(root), "sh", "-c", inner]


def test_the_built_image_serves_healthz_as_its_non_root_user(image_root: Path) -> None:
    config = _config()
    assert config.get("User") == "countersign"
    port = _free_port()
    command = [str(word) for word in config["Cmd"]]  # type: ignore[union-attr]
    uid = subprocess.run(
        ["/usr/sbin/chroot", str(image_root), "id", "-u", "countersign"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert uid != "0"
    run = _in_image(image_root, {**config, "User": uid}, command, HOST="127.0.0.1", PORT=str(port))
    with subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as bot:
        try:
            answer = None
            for _ in range(600):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                        answer = json.loads(r.read())
                        break
                except OSError:
                    assert bot.poll() is None, bot.stdout.read() if bot.stdout else ""
                    time.sleep(0.1)
            assert answer is not None and answer["ok"] is True
            check = config["Healthcheck"]["Test"]  # type: ignore[index]
            assert check[0] == "CMD"
            probe = _in_image(image_root, {**config, "User": uid}, check[1:], PORT=str(port))
            assert subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
        finally:
            bot.terminate()
            bot.wait(timeout=30)

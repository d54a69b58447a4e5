#!/usr/bin/env bash
# Install countersign into .venv from the lock file, or refresh the lock file.
#
#   scripts/install.sh run      what running needs (make run)
#   scripts/install.sh dev      that and the test and lint tools (make test, make check)
#   scripts/install.sh lock     re-lock after editing pyproject.toml (make lock)
#   scripts/install.sh upgrade  re-lock on the newest releases the floors allow (make upgrade)
#
# uv (from PyPI, pinned below, kept in ~/.cache/countersign) installs exactly what uv.lock pins;
# where uv cannot be had, pip installs the same pins from requirements/*.txt (exported from
# uv.lock, with hashes). PYTHON picks the interpreter (default python3); UV, a uv to use instead
# (UV=false: pip).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

UV_VERSION=0.13.9
PYTHON=${PYTHON:-python3}
VENV=.venv
what=${1:?usage: scripts/install.sh run|dev|lock|upgrade}

say() { echo "==> $*"; }

# A uv of UV_VERSION: $UV when given, else installed once from PyPI into the user's cache.
find_uv() {
    if [ -n "${UV:-}" ]; then
        "$UV" --version >/dev/null 2>&1 || return 1
        echo "$UV"
        return 0
    fi
    local home="${XDG_CACHE_HOME:-$HOME/.cache}/countersign/uv-$UV_VERSION"
    if [ ! -x "$home/bin/uv" ]; then
        say "Installing uv $UV_VERSION from PyPI into $home (once)" >&2
        "$PYTHON" -m pip install --disable-pip-version-check --root-user-action=ignore -qq \
            --target "$home" "uv==$UV_VERSION" >&2 || return 1
    fi
    echo "$home/bin/uv"
}

export_requirements() {
    local uv=$1
    mkdir -p requirements
    "$uv" export --frozen --no-emit-project --quiet -o requirements/run.txt
    "$uv" export --frozen --no-emit-project --quiet --extra dev -o requirements/dev.txt
    say "uv.lock and requirements/{run,dev}.txt are up to date: commit them"
}

case "$what" in
run | dev) ;;
lock | upgrade)
    uv=$(find_uv) || { echo "uv is needed to lock: pip install uv==$UV_VERSION" >&2; exit 1; }
    "$uv" lock --python "$PYTHON" $([ "$what" = upgrade ] && echo --upgrade)
    export_requirements "$uv"
    exit 0
    ;;
*)
    echo "usage: scripts/install.sh run|dev|lock|upgrade" >&2
    exit 2
    ;;
esac

# run: the dependencies alone (make run starts python -m bot in this folder, which imports the
# tree as it is; building the editable package costs a fresh clone several seconds);
# dev: the package too, so that mypy, python -m bot in other folders and subprocesses find it.
extra=(--no-install-project)
[ "$what" = dev ] && extra=(--extra dev)
if uv=$(find_uv); then
    say "Installing countersign ($what) into $VENV from uv.lock"
    # --compile-bytecode: uv writes no .pyc by default, and where PYTHONDONTWRITEBYTECODE is set
    # (CI, containers) Python would then compile every module again in every process it starts
    # (1.7 of python -m bot's 3 s of start-up CPU, and most of the test suite's processes).
    UV_PROJECT_ENVIRONMENT=$VENV "$uv" sync --frozen --no-python-downloads --python "$PYTHON" \
        --compile-bytecode "${extra[@]}"
else
    say "uv could not be installed: installing with pip from requirements/$what.txt instead"
    [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
    pip=("$VENV/bin/python" -m pip install --disable-pip-version-check --root-user-action=ignore)
    "${pip[@]}" --require-hashes -r "requirements/$what.txt"
    "${pip[@]}" --no-deps --config-settings editable_mode=compat -e .
fi

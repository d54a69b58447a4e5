#!/usr/bin/env bash
# A base image for the Dockerfile made from Debian's own packages, for a machine that reaches
# Debian's mirror but no container registry: debootstrap a minimal bookworm with Python 3.11,
# then import it into podman (or docker) as countersign-base:bookworm.
#
#   scripts/debian-base.sh [podman|docker]
#   podman build --build-arg BASE=localhost/countersign-base:bookworm -t countersign .
set -euo pipefail
engine=${1:-podman}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" "$mirror"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | "$engine" import - countersign-base:bookworm

# countersign in a container: slim, non-root, its dependencies exactly as uv.lock pins them
# (requirements/run.txt, with hashes), answering its health check on /healthz.
#
#   docker build -t countersign .        (or podman build)
#   docker compose up                    (compose.yaml: two bots, PostgreSQL, Redis)
#
# BASE: any image with Python 3.11+ and its venv module; scripts/debian-base.sh makes one
# from Debian's packages where no registry is reachable.
ARG BASE=docker.io/library/python:3.11-slim
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

# The dependencies first: this layer is rebuilt only when the lock changes. PIP_CERT: a CA
# bundle to trust, behind a proxy that re-signs TLS (mount it with the build's -v).
ARG PIP_CERT=""
COPY requirements/run.txt /app/requirements/run.txt
RUN python3 -m venv /opt/venv \
    && /opt/venv/bin/python -m pip install ${PIP_CERT:+--cert "$PIP_CERT"} \
        --no-deps --require-hashes -r /app/requirements/run.txt

COPY agents /app/agents
COPY bot /app/bot
COPY storage /app/storage
COPY tools /app/tools
# Compiled once here: the non-root user cannot write __pycache__, and compiling every module at
# each start would cost more than half of the start-up CPU.
RUN python3 -m compileall -q /app/agents /app/bot /app/storage /app/tools

RUN useradd --system --uid 10001 --user-group --home-dir /app --no-create-home countersign \
    && mkdir -p /app/data \
    && chown countersign:countersign /app/data
USER countersign
WORKDIR /app

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONPATH=/app \
    HOST=0.0.0.0 \
    PORT=3000
EXPOSE 3000

HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '3000') + '/healthz', timeout=2)"]

CMD ["python", "-m", "bot"]

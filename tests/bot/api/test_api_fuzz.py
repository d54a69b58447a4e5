"""Schema-driven fuzzing of ``/api`` with schemathesis against ``/api/openapi.json``.

Every operation of the published description gets generated requests, valid and invalid, sent
to the live server on 127.0.0.1; each response must not be a 5xx and must match the
description (status, content type, headers, body schema). Schemathesis' client is synchronous
(``requests``), so the examples run in a worker thread while the event loop serves them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from agents.models import reply
from storage import Storage
from tests.backends import POSTGRES_ENV, open_storage, unique_url
from tests.bot.api.fixtures import TOKEN, ApiHarness, api_harness, delete_call, ticket_call

pytestmark = pytest.mark.slow

MAX_EXAMPLES = 50
"""Examples per operation and generation mode (keeps the whole run well under 60 s)."""
CONFIG = {
    "checks": {
        # A schema-valid body can still fail the pending tool's own schema (edited args,
        # resume data): that is the documented 422, not a rejection of valid input.
        "positive_data_acceptance": {"expected-statuses": ["2xx", "401", "404", "409", "422"]},
    }
}


def _fuzz(api_url: str, doc: dict[str, Any], known: dict[str, str]) -> list[str]:
    """Run every operation in both modes; return the failures found (empty when clean)."""
    schema = schemathesis.openapi.from_dict(doc, config=schemathesis.Config.from_dict(CONFIG))
    failures: list[str] = []
    with requests.Session() as session:
        session.trust_env = False  # never route loopback through a proxy from the environment
        for result in schema.get_all_operations():
            operation = result.ok()
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                strategy = operation.as_strategy(generation_mode=mode)
                # Half of the requests aim at the served agent and at real pending calls, so
                # the fuzzer reaches the decision code and not only the 404 of unknown ids.
                targeted = operation.as_strategy(
                    generation_mode=mode, path_parameters={"agent_id": known["agent_id"]}
                )

                @settings(
                    max_examples=MAX_EXAMPLES,
                    deadline=None,
                    database=None,
                    derandomize=True,
                    suppress_health_check=list(HealthCheck),
                )
                @given(case=st.one_of(strategy, targeted), aim=st.booleans())
                def check(case: schemathesis.Case, aim: bool) -> None:
                    if aim and isinstance(case.body, dict):
                        case.body.update({k: v for k, v in known.items() if k in case.body})
                    response = case.call(
                        base_url=api_url,
                        session=session,
                        headers={"Authorization": f"Bearer {TOKEN}"},
                        timeout=10,
                    )
                    case.validate_response(response, headers={"Authorization": f"Bearer {TOKEN}"})

                try:
                    check()
                except (Exception, BaseExceptionGroup) as exc:  # collect all, then report
                    failures.append(f"{operation.label} [{mode.value}]: {exc}")
    return failures


@pytest.fixture
async def strictest_store(tmp_path: Path) -> AsyncIterator[Storage]:
    """PostgreSQL when configured (CI), else a SQLite file: the backends that refuse the most."""
    backend = "postgres" if os.environ.get(POSTGRES_ENV) else "sqlite"
    async with unique_url(backend, tmp_path) as url, open_storage(url) as store:
        yield store


async def _prepared(api: ApiHarness) -> dict[str, str]:
    approval = await api.suspend("delete", thread_id="t1", resource_id="u1")
    await api.suspend("ticket", thread_id="t2", resource_id="u1")
    return {
        "agent_id": api.agent.id,
        "runId": approval.run_id,
        "toolCallId": approval.pending[0].tool_call_id,
    }


# Raised from inside hypothesis/schemathesis on some generated examples (not our code); as an
# error it turned one example "interesting" and made its replay inconsistent.
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")
async def test_fuzzing_the_published_description_finds_no_5xx_and_no_schema_violation(
    strictest_store: Storage,
) -> None:
    script = [delete_call("abc", "c1"), ticket_call("printer", "t1")] + [reply("ok")] * 400
    async with api_harness(strictest_store, script) as api:
        known = await _prepared(api)
        doc = await (await api.call("GET", "/api/openapi.json")).json()
        failures = await asyncio.to_thread(_fuzz, api.base_url, doc, known)
        await api.settle()
    assert not failures, "\n\n".join(failures)

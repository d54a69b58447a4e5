"""The built-in ops agent (SPEC 10): served when ``BOT_AGENT`` is unset.

An ``ops`` supervisor with the record and ticket tools, and a ``billing`` sub-agent (refunds)
behind it as the delegation tool ``agent-billing``. Both run on ``OPENAI_MODEL`` through one
``AsyncOpenAI`` client built from the settings (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``) when a key
is set, else on the offline ``DemoModel``. Their tools work on the demo
tables of a ``DemoDB``: in the storage's own database for SQL storage, in an in-process SQLite
database for ``memory://`` and ``redis://`` storage (``tools.examples.demo_database_url``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents import Agent
from agents.models import Model
from bot._settings import Settings
from bot.demo._model import DemoModel
from storage import Storage
from tools.examples import DemoDB, record_tools, refund_tools, ticket_tools

if TYPE_CHECKING:  # ``openai`` is imported when a key is set: the offline demo never loads it
    from openai import AsyncOpenAI

OPS_INSTRUCTIONS = (
    "You are countersign's ops assistant in Slack. You can list, show and delete records, and "
    "open support tickets; hand refunds to the billing agent (agent-billing) with the order id "
    "and amount. Deleting records and large refunds wait for a person to approve: call the "
    "tool anyway, the person decides. When a tool asks for details (a ticket's priority), "
    "say what it needs. Answer briefly and say what happened."
)
BILLING_INSTRUCTIONS = (
    "You are the billing agent. Issue refunds with the refund tool (order id and amount). "
    "Refunds over 100 wait for a person to approve. Say in one sentence what happened."
)
BILLING_DESCRIPTION = "Handles refunds: give it the order id, the amount and the reason"


OPENAI_API_URL = "https://api.openai.com/v1"
"""Where the OpenAI model is served when ``OPENAI_BASE_URL`` is unset."""


def openai_client(settings: Settings) -> AsyncOpenAI | None:
    """The client of the built-in agent's OpenAI model, from the settings; None without a key
    (or with ``MODEL=offline``).

    Key and URL are passed explicitly, so the ``openai`` library reads neither from the process
    environment (the settings are the only source). The caller closes it.
    """
    if settings.openai_api_key is None or settings.model == "offline":
        return None
    from openai import AsyncOpenAI

    return AsyncOpenAI(
        api_key=settings.openai_api_key.get_secret_value(),
        base_url=settings.openai_base_url or OPENAI_API_URL,
    )


def agent_model(settings: Settings, client: AsyncOpenAI | None = None) -> Model:
    """``OPENAI_MODEL`` on ``client`` (default: ``openai_client(settings)``) with an API key,
    else the offline demo model."""
    client = client or openai_client(settings)
    if client is None:
        return DemoModel()
    from agents.models import OpenAIModel

    return OpenAIModel(settings.openai_model, client=client)


def ops_agent(
    settings: Settings,
    db: DemoDB,
    storage: Storage | None = None,
    *,
    client: AsyncOpenAI | None = None,
) -> Agent:
    """The ``ops`` supervisor with its ``billing`` sub-agent, on ``db``'s demo tables.

    Without ``storage`` the agents are served on the bot's. ``client`` (default
    ``openai_client(settings)``) serves both agents' OpenAI model. Claims are leased for
    ``CLAIM_LEASE_SECONDS``; who may decide comes from the bot (``bot._assembly.serve_agent``
    serves the agent with its rules, which need the Slack client).
    """
    client = client or openai_client(settings)
    billing = Agent(
        id="billing",
        name="Billing",
        description=BILLING_DESCRIPTION,
        instructions=BILLING_INSTRUCTIONS,
        model=agent_model(settings, client),
        tools=refund_tools(db),
        storage=storage,
    )
    return Agent(
        id="ops",
        name="Ops",
        instructions=OPS_INSTRUCTIONS,
        model=agent_model(settings, client),
        tools=[*record_tools(db), *ticket_tools(db)],
        agents={"billing": billing},
        storage=storage,
        default_options={
            "auto_resume_suspended_tools": True,
            "approval_ttl_seconds": settings.approval_ttl_seconds,
        },
        claim_lease_seconds=settings.claim_lease_seconds,
    )

"""The built-in example tools (SPEC 10), on the demo tables of a ``DemoDB``.

Example:
    >>> from agents import Agent
    >>> from tools.examples import DemoDB, record_tools, refund_tools, ticket_tools
    >>> db = DemoDB()                     # in-process SQLite; or DemoDB(STORAGE_URL) for SQL
    >>> billing = Agent(id="billing", model="openai/gpt-5-mini", tools=refund_tools(db))
    >>> ops = Agent(id="ops", model="openai/gpt-5-mini",
    ...             tools=[*record_tools(db), *ticket_tools(db)], agents={"billing": billing})
"""

from tools._demo_db import SEEDED_RECORDS, DemoDB, demo_database_url
from tools._examples_records import ListRecordsInput, RecordInput, record_tools
from tools._examples_refunds import APPROVAL_THRESHOLD, RefundInput, refund_tools
from tools._examples_tickets import PriorityAnswer, PriorityQuestion, TicketInput, ticket_tools

__all__ = [
    "APPROVAL_THRESHOLD",
    "SEEDED_RECORDS",
    "DemoDB",
    "ListRecordsInput",
    "PriorityAnswer",
    "PriorityQuestion",
    "RecordInput",
    "RefundInput",
    "TicketInput",
    "demo_database_url",
    "record_tools",
    "refund_tools",
    "ticket_tools",
]

"""The local workspace (SPEC 10): a page that behaves like one Slack channel, backed by an
in-process emulator of the Slack Web API and of Slack's signed event and interaction delivery.

``python -m bot`` with no Slack token serves it at ``http://127.0.0.1:3000``. The bot itself
runs unchanged: its ``AsyncWebClient`` calls the emulated Web API (``/_slack/api/``), and what
a person does on the page reaches ``/slack/events`` as Slack's signed payloads.
"""

from bot.local._serve import LocalSlack, model_label
from bot.local._workspace import WORKSPACE, Workspace

__all__ = ["WORKSPACE", "LocalSlack", "Workspace", "model_label"]

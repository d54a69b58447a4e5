"""``LOG_FORMAT=json``: one JSON object per line, with the run, thread and tool-call ids known.

Example line::

    {"time": "2024-05-01T12:00:00.123Z", "level": "INFO", "logger": "agents.running._run",
     "message": "…", "run_id": "9f…", "thread_id": "C1:1690000000.000001"}
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from agents import log_context

_IDS = ("run_id", "thread_id", "tool_call_id", "agent_id")


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON object (a traceback goes in ``exc_info``, on the same line)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(log_context())
        for name in _IDS:  # ids given with ``extra=`` win over the context
            value = record.__dict__.get(name)
            if isinstance(value, str):
                line[name] = value
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)

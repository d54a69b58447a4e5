"""Receiving: the bolt app and its aiohttp server, the listeners (ack, parse, hand off), the
pydantic models of Slack's payloads. A click starts here."""

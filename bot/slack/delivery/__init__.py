"""Delivery: what the bot writes to Slack: a run's stream in its thread, cards updated after a
decision, the card index, the outbox, the Home tab, the Web API client."""

"""Blocks: every Block Kit builder, pure functions over ``slack_sdk.models``: cards, modals,
forms, the Home tab, reminders, escaping, and the opaque button values."""

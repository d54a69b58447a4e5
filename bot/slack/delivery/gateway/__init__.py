"""Gateway cards (SPEC 17): a call the gateway holds comes from no Slack thread, so its card is a
message of its own in ``GATEWAY_CHANNEL`` (and its thread from then on)."""

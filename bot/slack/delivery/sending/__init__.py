"""Sending: what leaves for Slack on behalf of a run, fenced like storage (a taken-over owner
sends nothing more), and streamed text kept until Slack has it."""

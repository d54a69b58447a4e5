"""Deciding: a click, a modal submit or a thread reply turned into one decision of the
runtime (the workspace check, refusals, the audit of what the edge turned away)."""

"""Block Kit of standing grants and escalation (SPEC 15): the "Approve and allow…" modal, the
auto-approved line and the Home tab's grants (``_grant_modal``, ``_grant_blocks``), and the
card's escalation line (``_escalation``)."""

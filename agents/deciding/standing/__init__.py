"""What happens to a call while it waits, beyond one person's decision (SPEC 15): standing
grants that approve later calls like an approved one (``_grants``), and escalation steps that
widen who may approve a call nobody decided (``_escalation``)."""

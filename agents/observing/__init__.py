"""Observing: OpenTelemetry spans, log context ids, and the observer hooks a host's metrics use."""

"""A run as storage keeps it: the snapshot document (``RunState`` and its pending calls), the
lease a decided call's work runs under, a tool call's outcome, and the one-transaction writes of
each change of state (``RunWriter``). Below the gate and the run loop: both build on it."""

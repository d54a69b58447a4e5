"""Deciding: one entry point for every decision, the atomic claim, leases while a tool runs,
crash recovery, the snapshot document and the one-transaction writes of each state change."""

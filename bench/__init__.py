"""Benchmarks: ``python -m bench <figure>`` prints one JSON line per figure (SPEC 9)."""

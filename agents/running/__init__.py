"""Running: the run loop (model turn, gate, execute, suspend or continue), its stream and chunks,
one tool call's execution, the background runner, and auto-resume from a thread message."""

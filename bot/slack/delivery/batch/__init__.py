"""Batch cards in their thread: several gated calls of one model step posted on one message,
and that message drawn again from storage whenever one of its calls is decided."""

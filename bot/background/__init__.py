"""The server's periodic work: the expiry sweep and reminders of pending approvals, crash recovery
of claimed calls whose owner is gone, and flushing the Slack outbox.

``Background(services)`` runs them on the served agent's runner while the app is up.
"""

from bot.background._periodic import (
    SWEEP_EVERY,
    Background,
    Sweep,
    sweep,
    sweep_delay,
    sweep_expired,
)

__all__ = ["SWEEP_EVERY", "Background", "Sweep", "sweep", "sweep_delay", "sweep_expired"]

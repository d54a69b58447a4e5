"""The server's periodic work: the expiry sweep and reminders of pending approvals, crash recovery
of claimed calls whose owner is gone, and flushing the Slack outbox.

``Background(services)`` runs them on the served agent's runner while the app is up.
"""

from bot.background._periodic import Background, sweep_expired, sweep_interval

__all__ = ["Background", "sweep_expired", "sweep_interval"]

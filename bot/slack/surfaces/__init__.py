"""Slack's agent surfaces (SPEC 16): assistant threads (title, suggested prompts), the status
line of a run in an assistant thread, and answers streamed with ``chat.startStream`` /
``appendStream`` / ``stopStream`` (falling back to post + update where streaming is not
available)."""

"""The App Home tab: what each viewer's "Waiting for you" lists (``_listing``), and its
publishing: at once when opened, again for only the viewers a change affects, coalesced and
paced within Slack's ``views.publish`` limit (``_publish``, ``_pacing``)."""

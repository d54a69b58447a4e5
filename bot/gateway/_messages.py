"""Every sentence the gateway says: to MCP clients (tool results), to coding agents (the hook's
``permissionDecisionReason``) and on the cards it asks Slack to post."""

from __future__ import annotations

WAITING = (
    "This call is waiting for a person to approve it{where}. Nothing has run. Call this tool "
    "again with the same arguments to get its outcome: the same call waits on the same card "
    "(it is not asked twice)."
)
"""An MCP call still undecided when the hold ends."""
WHERE_CARD = " in Slack: {card}"
WHERE_SLACK = " in Slack (the countersign gateway channel, or the App Home tab)"

DECLINED = "Declined by {who}{why}: the call was not run."
WITHDRAWN = "Withdrawn by {who}, who asked for it: the call was not run."
WHY = " because: {reason}"
EXPIRED = (
    "The approval request expired before anyone decided it: the call was not run. Call again "
    "to ask anew."
)
GONE = "The pending call this request waited on is no longer stored: call again to ask anew."
FAILED = "The call was allowed, but running it failed: {error}"
INTERRUPTED = (
    "The call was approved and started, but the countersign instance running it stopped "
    "before it finished: its outcome is UNKNOWN (it may or may not have taken effect)."
)
UNKNOWN_TOOL = "No tool named {tool!r} is served by this countersign gateway."
NOBODY = "someone"

HOOK_ALLOWED = "countersign: no policy rule holds this call"
HOOK_APPROVED = "countersign: approved by {who}"
HOOK_WAITING = (
    "countersign: waiting for approval{where}; run it again to use the decision (the same call "
    "waits on the same card)"
)
HOOK_EXPIRED = "countersign: the approval request expired before anyone decided it"
HOOK_UNREACHABLE = (
    "countersign could not be reached ({error}), so this call is denied (fail-closed). Check "
    "COUNTERSIGN_URL and that the bot is running, then run it again."
)
HOOK_REFUSED = "countersign refused the request ({error}). Check COUNTERSIGN_TOKEN."
HOOK_CLASHES = (
    "countersign: {tool!r} is also the name of a tool its MCP gateway serves, so it cannot be "
    "asked about through the hook; leave it out of the hook's matcher"
)

ORIGIN_MCP = "from {client} through the countersign gateway · MCP server `{server}`"
ORIGIN_HOOK = "from {client} through the countersign hook"
ORIGIN_SESSION = " · session `{session}`"
ORIGIN_CWD = " · in `{cwd}`"

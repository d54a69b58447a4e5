"""Every user-facing string of the Slack edge, in one place."""

from __future__ import annotations

# -- configuration problems ------------------------------------------------------------------
SIGNING_SECRET_MISSING = (
    "Set SLACK_SIGNING_SECRET (Slack app → Basic Information → Signing Secret): HTTP mode "
    "verifies every request Slack sends"
)
OAUTH_VARIABLES_SET = (
    "Unset SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: countersign is a single-workspace bot "
    "(with both set, slack-bolt switches to OAuth and ignores SLACK_BOT_TOKEN)"
)
BOT_TOKEN_FORMAT = (
    "SLACK_BOT_TOKEN must be a bot token starting with xoxb- (Slack app → OAuth & Permissions "
    "→ Bot User OAuth Token)"
)
APP_TOKEN_FORMAT = (
    "SLACK_APP_TOKEN must be an app-level token starting with xapp- with the connections:write "
    "scope (Slack app → Basic Information → App-Level Tokens)"
)
APP_TOKEN_WITHOUT_BOT_TOKEN = (
    "Set SLACK_BOT_TOKEN too: Socket Mode (SLACK_APP_TOKEN) still posts with the bot token "
    "(Slack app → OAuth & Permissions → Bot User OAuth Token)"
)
SIGNING_SECRET_WITHOUT_BOT_TOKEN = (
    "Set SLACK_BOT_TOKEN (Slack app → OAuth & Permissions → Bot User OAuth Token), or unset "
    "SLACK_SIGNING_SECRET to run without Slack"
)
LOCAL_MODE_UNAVAILABLE = (
    "No SLACK_BOT_TOKEN is set, and the local workspace is not available in this version. "
    "Set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (HTTP mode) or SLACK_BOT_TOKEN and "
    "SLACK_APP_TOKEN (Socket Mode); see README.md, Slack setup"
)
AUTH_TEST_FAILED = (
    "Slack rejected SLACK_BOT_TOKEN (auth.test: {error}). Copy the Bot User OAuth Token again "
    "(Slack app → OAuth & Permissions) and check SLACK_API_URL"
)

# -- Slack messages ------------------------------------------------------------------------------
APPROVAL_FALLBACK = "Approval needed: {tool}"
APPROVAL_TITLE = ":lock: *Approval needed* to run `{tool}`"
APPROVAL_VIA = "Asked by the `{path}` agent"
ARGUMENTS_LABEL = "*Arguments*"
REQUESTED_BY = "Requested by <@{user}>"
REQUESTED_BY_UNKNOWN = "Requested in this thread"
APPROVE_BUTTON = "Approve"
DECLINE_BUTTON = "Decline"
APPROVED_BY = ":white_check_mark: Approved by {who} {when}"
DECLINED_BY = ":no_entry_sign: Declined by {who} {when}"
DECIDED_FALLBACK = "{decision} by {who}: {tool}"
QUESTION_FALLBACK = "{tool} needs more information"
QUESTION_TITLE = ":question: `{tool}` needs more information"
QUESTION_HINT = "Reply in this thread to answer."
ALREADY_DECIDED = "This request was already {decision} by {who} {when}. Nothing was run again."
NO_LONGER_PENDING = "This request is no longer pending (the run was finished or is unknown)."
FINGERPRINT_CHANGED = "The arguments changed since this card was posted; nothing was run."
EXPIRED = "This request expired before anyone decided it; it was declined and did not run."
RUN_FAILED = ":warning: Sorry, I could not finish that ({code})."
EMPTY_ANSWER = "(no answer)"
REFUSED_NOT_APPROVER = (
    "You are not an approver for this request (APPROVERS); nothing was changed. "
    "Ask one of the approvers."
)
REFUSED_SELF_APPROVAL = (
    "You asked for this action, so someone else has to approve it (ALLOW_SELF_APPROVAL is off); "
    "nothing was changed. You may still decline it."
)
REFUSED_OTHER_WORKSPACE = "Only members of this workspace can decide requests; nothing was changed."
FORM_CHOOSE = "Choose…"
FORM_YES = "Yes"
FORM_NO = "No"
FORM_NOT_A_NUMBER = "Enter a number."
FORM_NOT_JSON = "Enter valid JSON."
EDIT_BUTTON = "Edit"
PROVIDE_BUTTON = "Provide details"
ORIGINAL_ARGUMENTS_LABEL = "*Original arguments*"
APPROVED_ARGUMENTS_LABEL = "*Approved arguments* (edited)"
EXPIRED_CARD = ":hourglass: Expired {when} without a decision: declined, it did not run"
EXPIRED_FALLBACK = "Expired without a decision: {tool}"
REMINDER = (
    ":alarm_clock: The request to run `{tool}` above is still waiting for a decision; "
    "it expires {when} and will then be declined."
)
DECLINE_TITLE = "Decline request"
DECLINE_SUBMIT = "Decline"
DECLINE_REASON_LABEL = "Reason (optional)"
DECLINE_REASON_HINT = "The agent is told this reason; it is kept in the audit log."
DECLINE_INTRO = "Decline running `{tool}`? It will not run."
EDIT_TITLE = "Edit and approve"
EDIT_SUBMIT = "Approve"
EDIT_INTRO = "Change the arguments of `{tool}`, then approve it to run with them."
EDIT_UNAVAILABLE = (
    "This tool's arguments cannot be edited here (its definition is not available); "
    "approve or decline it as shown."
)
ANSWERED_BY = ":white_check_mark: Details provided by {who} {when}"
PROVIDE_TITLE = "Provide details"
PROVIDE_SUBMIT = "Send"
PROVIDE_INTRO = "`{tool}` needs more information."
CANCEL = "Cancel"
INVALID_DATA = "The values did not validate; nothing was run. Open the form again and fix them."

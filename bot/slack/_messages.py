"""Every user-facing string of the Slack edge, in one place."""

from __future__ import annotations

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
EXPIRED = (
    "This request expired before anyone decided it; it did not run. The agent was told it "
    "expired, and whoever asked may ask again from its card."
)
MODEL_REFUSED = ":warning: Sorry, I could not answer: {hint}."
"""A model error with something to fix (``ModelError.hint``), told in one sentence."""
RUN_FAILED = ":warning: Sorry, I could not finish that ({code})."
UNAVAILABLE = {
    "model": (
        ":warning: Sorry, the model API could not be reached, so I could not answer; "
        "an admin should check OPENAI_BASE_URL and OPENAI_API_KEY. Try again later."
    ),
    "storage": (
        ":warning: Sorry, my database could not be reached, so I could not finish that; "
        "an admin should check STORAGE_URL. Try again later."
    ),
    "redis": (
        ":warning: Sorry, Redis could not be reached, so I could not finish that; "
        "an admin should check REDIS_URL. Try again later."
    ),
    "slack": ":warning: Sorry, Slack did not answer while I worked on that. Try again later.",
}
"""What the thread is told when a service the bot needs is down (by ``Service``)."""
NOT_RECORDED = (
    "Could not record your decision: {service} is unreachable. Nothing was changed; "
    "try again in a moment."
)
EMPTY_ANSWER = "(no answer)"
REFUSED_NOT_APPROVER = (
    "You are not an approver for this request (APPROVERS); nothing was changed. "
    "Ask one of the approvers."
)
REFUSED_SELF_APPROVAL = (
    "You asked for this action, so someone else has to approve it (ALLOW_SELF_APPROVAL is off); "
    "nothing was changed. You may still decline it."
)
REFUSED_BY_POLICY = "You may not decide this request ({why}); nothing was changed."
DUPLICATE_APPROVAL = "You already approved this request; it needs another approver before it runs."
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
EXPIRED_CARD = ":hourglass: Expired {when} without a decision: it did not run"
EXPIRED_FALLBACK = "Expired without a decision: {tool}"
REMINDER = (
    ":alarm_clock: The request to run `{tool}` above is still waiting for a decision; "
    "it expires {when} and will then not run."
)
DECLINE_TITLE = "Decline request"
DECLINE_SUBMIT = "Decline"
DECLINE_REASON_LABEL = "Reason"  # Slack adds "(optional)" itself
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

# -- Cards (SPEC 12) -----------------------------------------------------------------------------
APPROVAL_HEADER = "Approve {title}?"
HEADER_APPROVED = "✅ Approved: {title}"
HEADER_DECLINED = "🚫 Declined: {title}"
HEADER_EXPIRED = "⌛ Expired: {title}"
HEADER_INTERRUPTED = "⚠️ Interrupted: {title}"
HEADER_ANSWERED = "✅ Answered: {title}"
TOOL_LINE = "Tool `{tool}`"
DESTRUCTIVE = ":warning: *destructive*"
ASKED_VIA = "via `{path}`"
APPROVERS_ANYONE = "Anyone in this workspace may approve"
APPROVERS_LIST = "May approve: {who}"
APPROVERS_NOT_SELF = " (not the requester)"
APPROVERS_NOT_SELF_NAMED = " (not <@{user}>, who asked for it)"
AND = "{rest} and {last}"
QUORUM = "{count} of {needed} approvals"
QUORUM_BY = "{count} of {needed} approvals: {who}"
EXPIRES = "Expires {when}"
ESCALATED_APPROVERS = ":rotating_light: Escalated: {who} may now approve too"
ESCALATED_CONTEXT = ":rotating_light: Escalated (step {step})"
ESCALATION = "{who}: the request to run `{tool}` above has waited {waited} for a decision."
ESCALATION_APPROVERS = " {who} may now approve it too."
ARGS_CUT = (
    ":scissors: _Cut to fit Slack ({total} characters in all): "
    "press Show all to see every argument._"
)
ARGS_TOO_LONG_FOR_MODAL = "… {left} more characters are not shown here; see the audit log."
SHOW_ALL_BUTTON = "Show all"
ARGS_MODAL_TITLE = "All arguments"
CLOSE = "Close"
CONFIRM_TITLE = "Are you sure?"
CONFIRM_TEXT = "Approve running {tool}? It cannot be undone."
CONFIRM_YES = "Approve"
CHANGED_WAS = "{key} (was)\n{value}"
CHANGED_NOW = "{key} (approved)\n{value}"
CHANGED_LABEL = "*Changed by the approver*"
DECIDED_REASON = "Reason: {reason}"
ANSWER_LABEL = "*Answer* (what the tool received)"
FROM_REPLY = "_From the reply:_ “{reply}”"
ASKED_AGAIN_BELOW = ":arrow_down: Asked again below."
INTERRUPTED_CARD = (
    ":warning: Interrupted {when}: the process running this call stopped; whether it took effect "
    "is unknown (it was not run again)"
)
INTERRUPTED_AFTER = (
    ":warning: Interrupted after {who} approved it {when}: the instance running it stopped; "
    "whether it took effect is unknown (it was not run again)"
)
INTERRUPTED_FALLBACK = "Interrupted: {tool}: the instance running it stopped"
INTERRUPTED_AFTER_FALLBACK = (
    "Interrupted after {who} approved it: {tool}: the instance running it stopped"
)
RAN_AGAIN = (
    ":repeat: The instance running it stopped; another ran it again (the tool is idempotent)"
)
REMINDER_APPROVED = "~Reminder~ The request to run `{tool}` was approved by {who} {when}."
REMINDER_DECLINED = "~Reminder~ The request to run `{tool}` was declined by {who} {when}."
REMINDER_EXPIRED = "~Reminder~ The request to run `{tool}` expired {when} and did not run."
REMINDER_INTERRUPTED = "~Reminder~ The request to run `{tool}` was interrupted {when}."
REMINDER_EXTENDED = "~Reminder~ The request to run `{tool}` was extended: it now expires {when}."
ARGS_MODAL_INTRO = "Every argument `{tool}` will run with, in full:"
FORM_KEPT = "_Too long to edit here ({length} characters): kept exactly as it is._"
USE_THE_BUTTONS = (
    ":point_up: A reply does not decide a request: use the *Approve*, *Edit* or *Decline* "
    "buttons on the card above (they check who may decide and what exactly runs)."
)

# -- App Home ("Waiting for you") ----------------------------------------------------------------
HOME_HEADER = "Waiting for you"
HOME_INTRO = "Pending approvals you may decide, newest first."
HOME_NOTHING = ":sparkles: Nothing is waiting for you."
HOME_ITEM = "*{title}*\n{tool} · requested by {who} · <{link}|open the thread>"
HOME_ITEM_NO_LINK = "*{title}*\n{tool} · requested by {who}"
HOME_ITEM_NO_THREAD = "*{title}*\n{tool} · requested by {who} · in no Slack thread (decide it here)"
HOME_RECORDED = ":white_check_mark: {what} `{tool}`: recorded (its run goes on outside Slack)."
HOME_RECORDED_WHAT = {
    "approve": "You approved",
    "edit": "You approved (edited)",
    "decline": "You declined",
    "withdraw": "You withdrew",
}
HOME_MORE = "… and {count} more, in their threads."
HOME_MORE_OLDER = "Older requests are not listed here: find them in their threads."
HOME_ARGS_CUT = "_:scissors: cut to fit: the card in its thread shows every argument_"
HOME_FALLBACK = "Waiting for you"
# -- Answers that do not fit a question -----------------------------------------------------------
ASK_AGAIN = (
    ":leftwards_arrow_with_hook: That reply did not answer `{tool}`'s question: {missing}. "
    "Reply again in this thread, or use *Provide details*."
)
ASK_AGAIN_MISSING = "it needs {fields}"
ASK_AGAIN_UNREADABLE = "the answer could not be read"

# -- What an approval binds (SPEC 3.3): withdrawal, calls presented again --------------------------
WITHDRAW_BUTTON = "Withdraw"
EXTEND_BUTTON = "Extend"
EXTENDED = ":hourglass_flowing_sand: Extended: this request now expires {when}."
CANNOT_EXTEND = "This request cannot be extended: {why}. Nothing was changed."
HOME_EXTENDED = ":hourglass_flowing_sand: Extended `{tool}`: it now expires {when}."
HEADER_WITHDRAWN = "↩️ Withdrawn: {title}"
WITHDRAWN_BY = ":leftwards_arrow_with_hook: Withdrawn by {who} {when}"
REFUSED_NOT_REQUESTER = (
    "Only the person who asked for this call may withdraw it; nothing was changed."
)
HEADER_REPLACED = "🔁 Replaced: {title}"
REPLACED_BY_EDIT = (
    ":pencil2: Edited by {who} {when}: the new arguments need more approval, so nothing ran. "
    "The edited call is on a new card below."
)
REPLACED_TOOL_CHANGED = (
    ":warning: The tool changed since this card was posted (its definition is not the one "
    "shown here), so nothing ran. The call is on a new card below, with the new definition."
)
TOOL_CHANGED = "The tool changed since this card was posted; nothing was run. Review the new card."
EDIT_NEEDS_MORE = (
    ":warning: Arguments with {what} need {needs} (rule {rule} of the policy file): such an "
    "edit runs nothing until they approve; it goes out as a new card."
)
NEEDS_APPROVERS = "{count} different approvers"
NEEDS_CONFIRM = "a confirmation"
ARG_ABOVE = "{name} above {limit}"

# -- Why a call waits (SPEC 12 round 4) ------------------------------------------------------------
WHY_PENDING = ":information_source: *Why it waits:* {why}"
WHY_DECIDED = ":information_source: *Why it waited:* {why}"
RULE_OF_FILE = "rule {number} of {file}"
RULE_NUMBER = "rule {number} of the policy file"
RULE_ASKS_QUORUM_FROM = "{count} approvals from {who}"
RULE_ASKS_QUORUM = "{count} different approvers"
RULE_ASKS_FROM = "an approval from {who}"
EDITED_CHANGED = ":pencil2: {who} changed {changes}"
EDITED_BY_SOMEONE = "an approver"
CHANGED_FROM_TO = "{key} {was} → {now}"
CHANGED_MORE = "and {count} more"
CHANGED_NOTHING = "the arguments"
NO_VALUE = "(none)"
EDIT_RULE_APPLIES = "{rule} now applies, and asks more than before"
EDIT_NEEDS_MORE_NOW = "the new arguments need more approval than before"

ASK_AGAIN_BUTTON = "Ask again"
ASKED_AGAIN = "Asked again by <@{user}>: the same call as the card above, which expired."
"""The message of the run an "Ask again" starts (the model reads it in the thread's memory)."""
REFUSED_ASK_AGAIN = (
    "Only the person who asked for this call may ask for it again; nothing was changed."
)

# -- batch cards (several gated calls of one step) --------------------------------------------
BATCH_HEADER = "Approve {count} calls?"
BATCH_HEADER_DONE = "All {count} calls decided"
BATCH_FALLBACK = "Approval needed for {count} calls: {tools}"
BATCH_HINT = (
    "Each call's ⋯ menu approves, edits, declines or shows it alone; "
    "Withdraw is for the person who asked."
)
BATCH_ROW = "*{number}. {title}*"
BATCH_ROW_TOOL = "`{tool}`"
ROW_EDIT = "Edit…"
ROW_DECLINE = "Decline…"
ROW_WITHDRAW = "Withdraw (requester only)"
CONFIRM_ROW = "Your choice for {tool} takes effect at once: approving it runs it."
CONFIRM_ROW_YES = "Go on"
ROW_STALE = (
    "That row changed since you opened its menu; nothing was changed. Look at the card again."
)
BATCH_NO_ARGS = "_no arguments_"
BATCH_ARGS_CUT = "_:scissors: cut to fit: Show all shows every argument_"
APPROVE_ALL_BUTTON = "Approve all {count}"
DECLINE_ALL_BUTTON = "Decline all {count}"
CONFIRM_APPROVE_ALL = "Approve all {count} calls still pending on this card? They run at once."
CONFIRM_DECLINE_ALL = "Decline all {count} calls still pending on this card? None of them runs."
BATCH_REFUSED = "Nothing was decided: call {number} ({tool}) was refused. {why}"
BATCH_NOTHING_PENDING = "Every call on this card was decided already."
BATCH_ROW_REPLACED = ":repeat: Replaced: a new card in this thread decides this call"

# -- Slack's agent surfaces (SPEC 16): assistant threads, the status line ----------------------
ASSISTANT_TITLE = "{agent}"
"""The title of a new assistant thread."""
PROMPTS_TITLE = "Try one of these:"
PROMPT_WHAT_CAN_YOU_DO = "What can you do?"
STATUS_THINKING = "is thinking…"
STATUS_WAITING = "is waiting for {who} to approve {tool}…"
STATUS_WAITING_ANYONE = "is waiting for an approver to approve {tool}…"
STATUS_ASKING = "is waiting for an answer for {tool}…"
STATUS_RUNNING = "is running {tool}…"
STATUS_CLEARED = ""
"""An empty status clears the status line."""
TASK_SENT_FOR_APPROVAL = "{tool}: sent for approval (card below)"
"""A streamed answer's task card once its call waits for approval: that step is done."""
TASK_ASKED = "{tool}: asked for details (question below)"
"""A streamed answer's task card once its call asked a question."""
# -- Standing grants (SPEC 15) ---------------------------------------------------------------------
GRANT_BUTTON = "Approve and allow…"
GRANT_MODAL_TITLE = "Approve and allow"
GRANT_MODAL_SUBMIT = "Approve"
GRANT_MODAL_INTRO = (
    "Approve this call of `{tool}` *and* later calls like it, without asking again, within "
    "the bounds below. Every argument stays pinned unless you let it vary."
)
GRANT_DURATION_LABEL = "For how long"
GRANT_USES_LABEL = "How many later calls at most"
GRANT_SCOPE_LABEL = "Where"
GRANT_SCOPE_THREAD = "This thread"
GRANT_SCOPE_RESOURCE = "This channel"
GRANT_FREE_LABEL = "Arguments that may vary"
GRANT_FREE_HINT = "Unticked arguments are pinned: a later call must have the same value."
GRANT_UNAVAILABLE = "Standing grants are not allowed for this call; approve it on its own."
GRANT_REFUSED = "No grant was made: {why}. The call is still pending."
GRANTED_LINE = (
    ":white_check_mark: `{tool}` {args}auto-approved under {who}'s grant ({left} of {max_uses} "
    "uses left, until {until})"
)
GRANTED_COVERS = " · it covers {tool} in {where}, {args}"
GRANTED_FALLBACK = "{tool} auto-approved under a standing grant"
GRANT_MADE = ":repeat: and allowed up to {uses} later calls like it in {where} for {duration}"
GRANT_ALL_PINNED = ", with the same arguments"
GRANT_SOME_FREE = ", whatever their {free}"
GRANT_REVOKE_BUTTON = "Revoke"
GRANT_REVOKED_LINE = ":no_entry_sign: Grant revoked by {who} {when}"
GRANT_REVOKED = "The grant is revoked: it approves nothing more."
GRANT_NOT_REVOKED = (
    "Only the person who made this grant, or an approver of its rule, may revoke it; "
    "nothing was changed."
)
HOME_GRANTS_HEADER = "Your active grants"
HOME_GRANTS_NONE = "You have no active standing grants."
HOME_GRANT_ITEM = "`{tool}` · {scope} · {left} of {max_uses} uses left · until {until}\n{pins}"
HOME_GRANT_THREAD = "in a thread"
HOME_GRANT_RESOURCE = "in <#{channel}>"

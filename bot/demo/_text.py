"""User-facing strings of the offline demo model, in one place."""

from __future__ import annotations

# -- the offline demo model ------------------------------------------------------------------
HELP = (
    "I am the offline demo model (no OPENAI_API_KEY is set), so I understand a few plain "
    "requests:\n"
    "• list records · show record 3\n"
    "• delete record 42 (waits for a person to approve)\n"
    "• delete records 3, 4 and 5 (one card for the three, with Approve all)\n"
    "• refund order 7 for 250 (billing agent; over 100 waits for approval)\n"
    "• open a ticket about the printer (I will ask for the priority)\n"
    "• /call <tool> key=value … calls any tool by name (/call alone lists them)"
)
LISTED = "Here are records {first}–{last} of {total}:\n{lines}"
LISTED_NONE = "There are no records left."
RECORD = "Record {id}: {name} ({kind})."
NO_RECORD = "There is no record {id}."
DELETED = "Done: record {id} ({name}) was deleted."
NOT_DELETED = "Nothing was deleted: record {id} does not exist."
DECLINED = "OK, I did not run {tool}: it was declined{reason}."
DECLINED_REASON = " ({reason})"
EXPIRED = "I did not run {tool}: nobody decided it in time, so its approval expired."
REFUNDED = "Refunded {amount} on order {order} (refund #{refund})."
NOT_REFUNDED = "No refund for order {order}: {reason}."
TICKET = "Opened ticket #{ticket} “{title}” with {priority} priority."
FAILED = "That did not work: {error}"
INTERRUPTED = "I cannot tell whether {tool} finished: the process stopped while it ran."
DONE = "Done ({tool})."
RETURNED = "{tool} returned: {result}"

# -- /call <tool> key=value (bot.demo._commands) ---------------------------------------------
USAGE = "Call a tool by name (values as JSON where the tool takes numbers, lists or objects):"
NO_TOOLS = "This agent offers no tools to call."
NO_SUCH_TOOL = "There is no tool named {tool!r} here."
BAD_JSON = "The arguments of {tool} are not a JSON object ({error})."
BAD_ARGUMENTS = (
    "The value of {key} for {tool} does not parse ({error}): write text with spaces in quotes, "
    'lists and objects as JSON: ids=[1, 2] note="two words"'
)
NOT_KEY_VALUE = "Write each argument as key=value, not {word!r}: {example}"

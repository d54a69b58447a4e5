"""What ``bot._settings`` says about a configuration problem: each message says what to do."""

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
API_TOKEN_ACTS_WITHOUT_TOKEN = (
    "API_TOKEN_ACTS_FOR_USERS=true needs API_TOKEN (the service token whose decidedBy is taken "
    "as the decider): set API_TOKEN, or unset API_TOKEN_ACTS_FOR_USERS"
)
API_TOKEN_IS_A_PERSONS = (
    "API_TOKEN is also a person's token in {path}: give the service and each person a token of "
    "their own"
)
MODEL_UNKNOWN = (
    "MODEL must be offline (every agent on the offline model: /call <tool> key=value calls a "
    "tool, no key needed) or unset, got {raw!r}; the OpenAI model's name goes in OPENAI_MODEL"
)
AUTH_TEST_FAILED = (
    "Slack rejected SLACK_BOT_TOKEN (auth.test: {error}). Copy the Bot User OAuth Token again "
    "(Slack app → OAuth & Permissions) and check SLACK_API_URL"
)

"""The public names of ``bot.gateway``, imported together the first time one of them is used
(see ``bot.gateway.__getattr__``); ``X as X`` re-exports each."""

from bot.gateway._agent import GATEWAY_AGENT_ID as GATEWAY_AGENT_ID
from bot.gateway._agent import gateway_agent as gateway_agent
from bot.gateway._gate import GateAnswers as GateAnswers
from bot.gateway._gateway import Answer as Answer
from bot.gateway._gateway import Ask as Ask
from bot.gateway._gateway import Gateway as Gateway
from bot.gateway._gateway import Origin as Origin
from bot.gateway._gateway import Presenter as Presenter
from bot.gateway._hook import DEFAULT_WAIT_SECONDS as DEFAULT_WAIT_SECONDS
from bot.gateway._hook import ask_hook as ask_hook
from bot.gateway._hook import hook_output as hook_output
from bot.gateway._hook import run_hook as run_hook
from bot.gateway._http import MCP_PATH as MCP_PATH
from bot.gateway._http import GatewayHTTP as GatewayHTTP
from bot.gateway._mcp import GatewayMCP as GatewayMCP
from bot.gateway._relay import relay_stdio as relay_stdio
from bot.gateway._tools import GatewayTools as GatewayTools
from bot.gateway._tools import HookGate as HookGate
from bot.gateway._waiting import Wakeups as Wakeups

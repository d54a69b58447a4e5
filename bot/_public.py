"""The public names of ``bot``, imported together the first time one of them is used (see
``bot.__getattr__``); ``X as X`` re-exports each."""

from bot._agent_loader import AgentLoadError as AgentLoadError
from bot._assembly import ServedAgent as ServedAgent
from bot._assembly import serve_agent as serve_agent
from bot._errors import BotConfigError as BotConfigError
from bot._errors import BotError as BotError
from bot._settings import Settings as Settings
from bot._settings import load_settings as load_settings
from bot.policy import Policy as Policy
from bot.policy import Refusal as Refusal
from bot.policy._approval_rules import ApprovalRules as ApprovalRules
from bot.slack import APPROVE_ACTION as APPROVE_ACTION
from bot.slack import BOLT_APP as BOLT_APP
from bot.slack import DECLINE_ACTION as DECLINE_ACTION
from bot.slack import HEALTH_CHECKS as HEALTH_CHECKS
from bot.slack import SERVICES as SERVICES
from bot.slack import AnyoneMayDecide as AnyoneMayDecide
from bot.slack import EdgePolicy as EdgePolicy
from bot.slack import Services as Services
from bot.slack import SettingsPolicy as SettingsPolicy
from bot.slack import Superseded as Superseded
from bot.slack import create_bolt_app as create_bolt_app
from bot.slack import create_services as create_services
from bot.slack import create_web_app as create_web_app

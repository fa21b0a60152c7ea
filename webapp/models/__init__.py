"""The database models, one module per concept, importable from here."""

from webapp.models.accounts import ApiToken, User
from webapp.models.chat import Conversation, Message, ToolCall, Turn, TurnStep
from webapp.models.limits import UserLimit
from webapp.models.mcp import McpServer
from webapp.models.plugins import PluginOptions, UserPluginSettings, UserToolSetting
from webapp.models.providers import Provider
from webapp.models.uploads import Upload
from webapp.models.usage import UsageCount

__all__ = [
    "ApiToken",
    "Conversation",
    "McpServer",
    "Message",
    "PluginOptions",
    "Provider",
    "ToolCall",
    "Turn",
    "TurnStep",
    "User",
    "UserLimit",
    "UserPluginSettings",
    "Upload",
    "UsageCount",
    "UserToolSetting",
]

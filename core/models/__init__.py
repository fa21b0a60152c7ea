"""The database models, one module per concept, importable from here."""

from core.models.accounts import ApiToken, User
from core.models.chat import Conversation, Message, ToolCall, Turn, TurnStep
from core.models.limits import UserLimit
from core.models.mcp import McpServer
from core.models.plugins import PluginOptions, UserPluginSettings, UserToolSetting
from core.models.providers import Provider
from core.models.uploads import Upload
from core.models.usage import UsageCount

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

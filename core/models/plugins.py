"""Stored plugin choices: an admin's options per plugin, each user's settings and tool switches."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from core.extensions import db
from core.kept import watch
from core.models.base import ID_LENGTH, utcnow
from core.models.encrypted import EncryptedJSON


class PluginOptions(db.Model):
    """The options an admin saved for one plugin, as validated at save time."""

    __tablename__ = "plugin_options"

    plugin_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    options: Mapped[dict] = mapped_column(EncryptedJSON, nullable=False, default=dict)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, default=utcnow, onupdate=utcnow
    )


class UserPluginSettings(db.Model):
    """One user's settings for one plugin."""

    __tablename__ = "user_plugin_settings"

    user_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    plugin_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    settings: Mapped[dict] = mapped_column(EncryptedJSON, nullable=False, default=dict)


class UserToolSetting(db.Model):
    """One user's switch for one tool (only tools with user_toggle may be switched)."""

    __tablename__ = "user_tool_settings"

    user_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    tool: Mapped[str] = mapped_column(String(200), primary_key=True)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, default=utcnow, onupdate=utcnow
    )


# Set anew after every commit that wrote a user's plugin settings: workers keep them per
# process behind it (core/plugin_host.py: find_kept_settings).
SETTINGS_VERSION_KEY = "lookout:plugin-settings:version"
watch(UserPluginSettings, SETTINGS_VERSION_KEY)
# Set anew after every commit that wrote a user's tool switches: each process keeps them
# behind it (core/plugin_host.py: enabled_tools, which a model step asks every step).
TOOLS_VERSION_KEY = "lookout:tool-switches:version"
watch(UserToolSetting, TOOLS_VERSION_KEY)

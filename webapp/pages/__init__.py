"""The server-rendered pages: one module per area, like webapp/api/, listed together here.

Each page is a shell whose script (under static/) fetches the JSON API; blueprint and endpoint
names (`home.index`, `admin_plugins.index`, ...) are what templates pass to url_for.
"""

from webapp.pages import (
    account,
    admin,
    api_docs,
    chat,
    mcp_servers,
    plugins,
    providers,
    tokens,
    usage,
    users,
)

BLUEPRINTS = (
    chat.bp,
    admin.bp,
    plugins.settings,
    plugins.admin_plugins,
    providers.bp,
    mcp_servers.bp,
    tokens.bp,
    account.bp,
    users.bp,
    usage.bp,
    api_docs.bp,
)

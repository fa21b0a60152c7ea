"""Browser-side hardening: a Content Security Policy and related headers on every response,
and session cookies that stay on this site (and on HTTPS when PUBLIC_URL is https).

The policy allows scripts, styles and connections from this origin only, so text a model or a
web page put into a reply can never run as script even if some rendering bug let markup
through. Images may come from any http(s) address because a reply's images load when the user
clicks to load them; the page sends no referrer with them.
"""

from __future__ import annotations

from flask import Flask, Response
from werkzeug.middleware.proxy_fix import ProxyFix

POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: http: https:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def add_security_headers(response: Response) -> Response:
    """Set the hardening headers a response does not set itself."""
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def init_security(app: Flask) -> None:
    """Add the headers to every response, harden the session cookie, and believe the client
    address and scheme that TRUSTED_PROXIES proxies report."""
    proxies = app.config["TRUSTED_PROXIES"]
    if proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    app.config["SESSION_COOKIE_SECURE"] = app.config["PUBLIC_URL"].startswith("https:")
    app.after_request(add_security_headers)

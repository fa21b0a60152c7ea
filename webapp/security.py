"""Browser-side hardening: a Content Security Policy and related headers on every response,
and session cookies that stay on this site (and on HTTPS when PUBLIC_URL is https).

The policy allows scripts, styles and connections from this origin only, so text a model or a
web page put into a reply can never run as script even if some rendering bug let markup
through. Images may come from any http(s) address because a reply's images load when the user
clicks to load them; the page sends no referrer with them.
"""

from __future__ import annotations

import ipaddress

from flask import Flask, Response, current_app, request
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


def client_address() -> str:
    """Return the client's address as every check reads it (sign-in limits, the password form,
    METRICS_ALLOW): the peer's, or the one the TRUSTED_PROXIES proxies report in
    X-Forwarded-For (``ProxyFix``, installed by ``init_security``); an IPv4 address mapped into
    IPv6 as plain IPv4, without a zone. "" when there is none."""
    raw = (request.remote_addr or "").split("%")[0]
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return raw
    return str(getattr(address, "ipv4_mapped", None) or address)


def forwarded_by_untrusted_proxy() -> bool:
    """Return whether the request names a client of its own (X-Forwarded-For, Forwarded) that
    Lookout was not told to believe (TRUSTED_PROXIES is 0): its peer is then a proxy, and the
    client behind it is unknown."""
    if current_app.config["TRUSTED_PROXIES"]:
        return False
    return "X-Forwarded-For" in request.headers or "Forwarded" in request.headers


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

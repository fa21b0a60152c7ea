"""Which IP addresses a tool may reach: only globally routable ones, judged by explicit tables.

Python's ``ipaddress`` flags misjudge this (multicast, NAT64 and 6to4 forms, fec0::/10 and
100.64.0.0/10 on 3.11), so the refused ranges are listed here, and IPv6 forms that embed an
IPv4 address are judged by the address inside.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

AddressPolicy = Callable[[str], bool]
"""Takes an IP address as text (possibly with an IPv6 ``%scope``); returns whether to connect."""

_V4, _V6 = ipaddress.IPv4Network, ipaddress.IPv6Network

# ipaddress's is_global/is_private disagree with this job (multicast, NAT64, 6to4, fec0::/10 and
# 100.64.0.0/10 are misjudged on 3.11), hence explicit tables. First match gives the reason.
# Cloud metadata elsewhere is already covered: 169.254.169.254 (AWS, GCP, Azure IMDS, OCI,
# OpenStack, DigitalOcean), 100.100.100.200 (Alibaba), 192.0.0.192 (Oracle), fd00:ec2::254 (AWS).
_IPV4_REFUSED: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/8"), "unspecified ('this network')"),
    (_V4("10.0.0.0/8"), "private network"),
    (_V4("100.64.0.0/10"), "shared address space (carrier-grade NAT)"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link-local (cloud metadata)"),
    (_V4("172.16.0.0/12"), "private network"),
    (_V4("192.0.0.0/24"), "IETF protocol assignments"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "6to4 relay anycast"),
    (_V4("192.168.0.0/16"), "private network"),
    (_V4("198.18.0.0/15"), "benchmarking"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("255.255.255.255/32"), "limited broadcast"),
    (_V4("240.0.0.0/4"), "reserved"),
    (_V4("168.63.129.16/32"), "cloud metadata (Azure WireServer)"),
)
_IPV6_REFUSED: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("2001::/32"), "Teredo tunnel"),
    (_V6("2001::/23"), "IETF protocol assignments"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
    (_V6("64:ff9b:1::/48"), "local-use NAT64"),
    (_V6("100::/64"), "discard-only"),
    (_V6("fc00::/7"), "unique local (private network)"),
    (_V6("fe80::/10"), "link-local"),
    (_V6("fec0::/10"), "site-local"),
    (_V6("ff00::/8"), "multicast"),
)
_GLOBAL_UNICAST = _V6("2000::/3")
_NAT64 = _V6("64:ff9b::/96")
_LOW_32_BITS = 0xFFFFFFFF


def find_refusal_reason(ip: str) -> str | None:
    """Return why the default policy refuses ``ip``, or None when it is globally routable."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return "not an IP address"
    if isinstance(address, ipaddress.IPv4Address):
        return _ipv4_refusal_reason(address)
    return _ipv6_refusal_reason(ipaddress.IPv6Address(int(address)))  # drops any %scope


def address_allowed(ip: str) -> bool:
    """Return True only for a globally routable address: the default ``AddressPolicy``."""
    return find_refusal_reason(ip) is None


def _ipv4_refusal_reason(address: ipaddress.IPv4Address) -> str | None:
    return next((reason for network, reason in _IPV4_REFUSED if address in network), None)


def _ipv6_refusal_reason(address: ipaddress.IPv6Address) -> str | None:
    if address == ipaddress.IPv6Address("::"):
        return "unspecified"
    if address == ipaddress.IPv6Address("::1"):
        return "loopback"
    embedded = _find_embedded_ipv4(address)
    if embedded is not None:
        form, inner = embedded
        reason = _ipv4_refusal_reason(inner)
        return None if reason is None else f"{reason} ({inner} inside {form})"
    for network, reason in _IPV6_REFUSED:
        if address in network:
            return reason
    if address not in _GLOBAL_UNICAST:
        return "not global unicast (outside 2000::/3)"
    return None


def _find_embedded_ipv4(
    address: ipaddress.IPv6Address,
) -> tuple[str, ipaddress.IPv4Address] | None:
    """Return the IPv4 address an IPv6 address stands for, with the name of the form, if any."""
    if address.ipv4_mapped is not None:
        return "IPv4-mapped IPv6", address.ipv4_mapped
    if int(address) >> 32 == 0:
        return "IPv4-compatible IPv6", ipaddress.IPv4Address(int(address) & _LOW_32_BITS)
    if address in _NAT64:
        return "NAT64 IPv6", ipaddress.IPv4Address(int(address) & _LOW_32_BITS)
    if address.sixtofour is not None:
        return "6to4 IPv6", address.sixtofour
    return None

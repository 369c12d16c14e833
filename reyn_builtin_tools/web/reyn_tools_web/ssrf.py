"""SSRF guard: which addresses ``web_fetch`` may connect to.

The rule is checked on *resolved* addresses, never on the host text, so every spelling of an
address (``2130706433``, ``0x7f.1``, ``127.1``, ``017700000001``, ``[::ffff:127.0.0.1]``) meets the
same check as ``127.0.0.1``. An address is allowed when it is globally routable and none of the
special ranges below; embedded IPv4 addresses (IPv4-mapped, 6to4) are unwrapped and checked too,
NAT64 is refused outright. An operator allowlist is the only way to reach anything else.

The caller must connect to one of the addresses this module returned — never resolve the host a
second time — or a DNS answer that changes between check and connect (rebinding) defeats it.
Pure standard library: importing it costs nothing.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Ranges refused even where the ipaddress module calls them global (multicast, NAT64, 6to4 relay
# anycast, shared address space, IPv6 site-local, the 3fff::/20 documentation range, SRv6 SIDs) —
# listed explicitly, after IANA's IPv4/IPv6 special-purpose address registries, so the rule does not
# depend on the Python version. Special blocks with globally reachable sub-blocks (192.0.0.0/24,
# 2001::/23) are refused whole: fail closed. On top of the table, an IPv6 address outside the global
# unicast space 2000::/3 is refused (see ``refusal_reason``).
_REFUSED_NETWORKS: tuple[tuple[Network, str], ...] = (
    (ipaddress.ip_network("0.0.0.0/8"), "'this network'"),
    (ipaddress.ip_network("100.64.0.0/10"), "carrier-grade NAT (shared address space)"),
    (ipaddress.ip_network("192.0.0.0/24"), "IETF protocol assignments"),
    (ipaddress.ip_network("192.0.2.0/24"), "documentation (TEST-NET-1)"),
    (ipaddress.ip_network("192.88.99.0/24"), "6to4 relay anycast"),
    (ipaddress.ip_network("198.18.0.0/15"), "benchmarking"),
    (ipaddress.ip_network("198.51.100.0/24"), "documentation (TEST-NET-2)"),
    (ipaddress.ip_network("203.0.113.0/24"), "documentation (TEST-NET-3)"),
    (ipaddress.ip_network("224.0.0.0/4"), "multicast"),
    (ipaddress.ip_network("240.0.0.0/4"), "reserved"),
    (ipaddress.ip_network("::/96"), "IPv4-compatible / unspecified"),
    (ipaddress.ip_network("64:ff9b::/96"), "NAT64 (may reach any IPv4 address)"),
    (ipaddress.ip_network("64:ff9b:1::/48"), "local-use NAT64"),
    (ipaddress.ip_network("100::/64"), "discard-only"),
    (ipaddress.ip_network("100:0:0:1::/64"), "dummy IPv6 prefix"),
    (ipaddress.ip_network("2001::/32"), "Teredo"),
    (ipaddress.ip_network("2001::/23"), "IETF protocol assignments"),
    (ipaddress.ip_network("2001:db8::/32"), "documentation"),
    (ipaddress.ip_network("3fff::/20"), "documentation"),
    (ipaddress.ip_network("5f00::/16"), "SRv6 SIDs"),
    (ipaddress.ip_network("fc00::/7"), "unique local"),
    (ipaddress.ip_network("fe80::/10"), "link-local"),
    (ipaddress.ip_network("fec0::/10"), "site-local (deprecated)"),
    (ipaddress.ip_network("ff00::/8"), "multicast"),
)
_GLOBAL_UNICAST_V6 = ipaddress.ip_network("2000::/3")
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")


class AddressRefused(Exception):
    """A URL's host resolves to an address the guard refuses; the message says which and why."""


@dataclass(frozen=True, slots=True)
class HostAllowlist:
    """The operator's way to reach non-global addresses: host names (exact, case-insensitive) whose
    every resolved address is allowed, and IP addresses or CIDR networks allowed wherever they
    are resolved from."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> HostAllowlist:
        """Build from profile entries such as ``"searx.lan"``, ``"127.0.0.1"``, ``"10.0.0.0/8"``.
        Raises ``ValueError`` for an entry that is neither a host name nor an address."""
        hosts: set[str] = set()
        nets: list[Network] = []
        for raw in entries:
            entry = raw.strip().lower().rstrip(".")
            if entry.startswith("[") and entry.endswith("]"):
                entry = entry[1:-1]
            if not entry:
                raise ValueError("an allowlist entry is empty")
            try:
                nets.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            if any(c in entry for c in "/:@ ") or not all(part for part in entry.split(".")):
                raise ValueError(f"allowlist entry {raw!r} is neither a host name nor an IP address/network")
            hosts.add(entry)
        return cls(frozenset(hosts), tuple(nets))

    def admits_host(self, host: str) -> bool:
        """Whether ``host`` (as written in the URL) is an allowlisted name."""
        return normalise_host(host) in self.hosts

    def admits_address(self, ip: IPAddress) -> bool:
        """Whether ``ip`` falls in an allowlisted address or network."""
        return any(ip.version == net.version and ip in net for net in self.networks)


EMPTY_ALLOWLIST = HostAllowlist()


def normalise_host(host: str) -> str:
    """Lower-case, strip brackets and one trailing dot."""
    h = host.strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    return h[:-1] if h.endswith(".") else h


def refusal_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public address, or None when it is one a fetch may reach."""
    if isinstance(ip, ipaddress.IPv6Address):
        mapped = ip.ipv4_mapped
        if mapped is not None:
            inner = refusal_reason(mapped)
            return f"IPv4-mapped {mapped}: {inner}" if inner else None
        if ip in _SIX_TO_FOUR:
            embedded = ip.sixtofour
            inner = refusal_reason(embedded) if embedded is not None else "malformed"
            if inner:
                return f"6to4 address embedding {embedded}: {inner}"
    for net, label in _REFUSED_NETWORKS:
        if ip.version == net.version and ip in net:
            return label
    if isinstance(ip, ipaddress.IPv6Address) and ip not in _GLOBAL_UNICAST_V6:
        return "outside the IPv6 global unicast space 2000::/3"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "not globally routable"
    return None


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (numeric spellings included), in resolver order.

    Raises ``AddressRefused`` when it does not resolve. Blocking: call it in a worker thread.
    """
    name = normalise_host(host)
    if not name or "\x00" in name:
        raise AddressRefused(f"host {host!r} is empty or malformed")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise AddressRefused(f"host {host!r} does not resolve ({exc})") from None
    out: list[IPAddress] = []
    for info in infos:
        addr = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
        ip = ipaddress.ip_address(addr)
        if ip not in out:
            out.append(ip)
    if not out:
        raise AddressRefused(f"host {host!r} resolves to no address")
    return out


def check_addresses(
    host: str, addresses: Sequence[IPAddress], allowlist: HostAllowlist = EMPTY_ALLOWLIST
) -> None:
    """Refuse unless *every* address is public or allowlisted (one bad answer poisons the lot, so
    a resolver mixing a public and a private answer cannot be used to reach the private one)."""
    if allowlist.admits_host(host):
        return
    for ip in addresses:
        reason = refusal_reason(ip)
        if reason and not allowlist.admits_address(ip):
            raise AddressRefused(
                f"host {host!r} resolves to {ip}, which is {reason}; fetching non-public addresses is "
                "refused (an operator may allow a host in [plugins.web.settings.fetch] allow_hosts)"
            )


def resolve_checked(host: str, port: int, allowlist: HostAllowlist = EMPTY_ALLOWLIST) -> list[IPAddress]:
    """Resolve ``host`` and refuse unless every address passes; returns the addresses to connect to."""
    addresses = resolve(host, port)
    check_addresses(host, addresses, allowlist)
    return addresses

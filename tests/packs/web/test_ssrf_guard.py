"""The SSRF guard, one row per attack, with the allowlist off (the pure address rule)."""

from __future__ import annotations

import ipaddress

import pytest
from reyn_tools_web.ssrf import (
    AddressRefused,
    HostAllowlist,
    check_addresses,
    refusal_reason,
    resolve_checked,
)

REFUSED_HOSTS = [
    ("127.0.0.1", "loopback"),
    ("localhost", "loopback"),
    ("2130706433", "decimal integer"),
    ("0x7f.1", "hex + short form"),
    ("0x7f000001", "hex integer"),
    ("127.1", "short dotted form"),
    ("017700000001", "octal integer"),
    ("0177.0.0.1", "octal dotted"),
    ("[::ffff:127.0.0.1]", "IPv4-mapped IPv6 loopback"),
    ("::ffff:7f00:1", "IPv4-mapped IPv6, hex"),
    ("[::1]", "IPv6 loopback"),
    ("0.0.0.0", "unspecified"),
    ("[::]", "IPv6 unspecified"),
    ("10.1.2.3", "private 10/8"),
    ("172.16.0.1", "private 172.16/12"),
    ("192.168.1.1", "private 192.168/16"),
    ("169.254.169.254", "link-local (cloud metadata)"),
    ("100.64.0.1", "CGNAT"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast SSDP"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    ("198.18.0.1", "benchmarking"),
    ("192.0.0.8", "IETF protocol assignments"),
    ("[fe80::1]", "IPv6 link-local"),
    ("[fc00::1]", "IPv6 unique local"),
    ("[ff02::1]", "IPv6 multicast"),
    ("[64:ff9b::7f00:1]", "NAT64 of 127.0.0.1"),
    ("[64:ff9b::808:808]", "NAT64 even of a public address"),
    ("[2002:7f00:1::1]", "6to4 embedding 127.0.0.1"),
    ("[2001::1]", "Teredo"),
    ("[2001:db8::1]", "documentation"),
    ("[::ffff:10.0.0.1]", "IPv4-mapped private"),
    ("[::ffff:169.254.169.254]", "IPv4-mapped link-local"),
    # ranges Python 3.11's ipaddress calls global, or that only IANA's registry names
    ("[fec0::1]", "IPv6 site-local (deprecated)"),
    ("[3fff::1]", "IPv6 documentation, RFC 9637"),
    ("[3fff:fff:ffff::1]", "IPv6 documentation, top of 3fff::/20"),
    ("[2001:db8:ffff::1]", "IPv6 documentation 2001:db8::/32"),
    ("[100::1]", "IPv6 discard-only 100::/64"),
    ("[100:0:0:1::1]", "IPv6 dummy prefix"),
    ("[2001:1::1]", "2001::/23 sub-block (PCP anycast)"),
    ("[2001:3::1]", "2001::/23 sub-block (AMT)"),
    ("[2001:4:112::1]", "2001::/23 sub-block (AS112-v6)"),
    ("[2001:20::1]", "2001::/23 sub-block (ORCHIDv2)"),
    ("[2001:1ff::1]", "2001::/23, top"),
    ("[64:ff9b:1::a00:1]", "local-use NAT64"),
    ("[5f00::1]", "SRv6 SIDs"),
    ("[4000::1]", "IPv6 outside 2000::/3"),
    ("[::2]", "IPv4-compatible"),
    ("192.0.2.1", "documentation TEST-NET-1"),
    ("198.51.100.1", "documentation TEST-NET-2"),
    ("203.0.113.1", "documentation TEST-NET-3"),
]


@pytest.mark.parametrize(("host", "why"), REFUSED_HOSTS, ids=[h for h, _ in REFUSED_HOSTS])
def test_non_public_host_spelling_is_refused(host: str, why: str) -> None:
    with pytest.raises(AddressRefused, match="refused"):
        resolve_checked(host, 80)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
        "2002:808:808::1",
        "2001:200::1",
        "2a00:1450::1",
        "3ffe::1",
        "3fff:1000::1",
    ],
)
def test_public_addresses_pass(address: str) -> None:
    assert refusal_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("address", "label"),
    [
        ("fec0::1", "site-local"),
        ("3fff::1", "documentation"),
        ("5f00::1", "SRv6"),
        ("2001:4:112::1", "IETF protocol"),
        ("4000::1", "2000::/3"),
    ],
)
def test_the_refusal_names_the_range(address: str, label: str) -> None:
    assert label in (refusal_reason(ipaddress.ip_address(address)) or "")


def test_public_address_checked_without_dns() -> None:
    assert [str(a) for a in resolve_checked("8.8.8.8", 443)] == ["8.8.8.8"]


def test_one_private_answer_poisons_a_mixed_resolution() -> None:
    addrs = [ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("10.0.0.5")]
    with pytest.raises(AddressRefused, match=r"10\.0\.0\.5.*private"):
        check_addresses("mixed.example", addrs)


def test_unresolvable_host_is_refused() -> None:
    with pytest.raises(AddressRefused, match="does not resolve"):
        resolve_checked("no-such-host.invalid", 80)


def test_nul_in_host_is_refused() -> None:
    with pytest.raises(AddressRefused, match="malformed"):
        resolve_checked("exa\x00mple.com", 80)


def test_allowlisted_address_passes_only_that_address() -> None:
    allow = HostAllowlist.parse(["127.0.0.1"])
    assert [str(a) for a in resolve_checked("127.0.0.1", 80, allow)] == ["127.0.0.1"]
    assert [str(a) for a in resolve_checked("2130706433", 80, allow)] == ["127.0.0.1"]  # same address
    with pytest.raises(AddressRefused):
        resolve_checked("127.0.0.2", 80, allow)
    with pytest.raises(AddressRefused):
        resolve_checked("[::1]", 80, allow)


def test_allowlisted_network_and_host_name() -> None:
    allow = HostAllowlist.parse(["127.0.0.0/8", "LocalHost."])
    assert resolve_checked("127.9.9.9", 80, allow)
    assert HostAllowlist.parse(["localhost"]).admits_host("LOCALHOST")
    assert not HostAllowlist.parse(["localhost"]).admits_host("localhost.evil.example")


@pytest.mark.parametrize("entry", ["", "http://x", "a b", "user@host", "a..b"])
def test_bad_allowlist_entry_is_an_error(entry: str) -> None:
    with pytest.raises(ValueError):
        HostAllowlist.parse([entry])

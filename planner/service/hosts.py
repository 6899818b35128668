"""Which host names and addresses are this machine's own (loopback): where a server may run
without a token, and the only ``Host`` a token-less server answers (DNS rebinding)."""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost (any case; a fully qualified name's
    trailing dot, ``localhost.``, is the same name): no one else can connect."""
    name = host.lower()
    if name.endswith(".") and not name.endswith(".."):
        name = name[:-1]
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False

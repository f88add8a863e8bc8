"""Two rxe guests cabled to each other: the server in one (10.77.0.2), the client in the other
(10.77.0.3), their RoCE NICs' dgram ends pointed at each other, the TCP exchange through the
server's hostfwd port and the client's 10.0.2.2. Used by rxe_pair_test.py and make_fixtures.py.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import guest
import guest_image

SERVER = guest.Address(mac="52:54:00:00:00:02", ip="10.77.0.2")
CLIENT = guest.Address(mac="52:54:00:00:00:03", ip="10.77.0.3")
EXCHANGE_PORT = 18515  # ibv_rc_pingpong's and perftest's default


@dataclass
class Pair:
    server: guest.Guest
    client: guest.Guest
    server_status: int
    client_status: int
    boot_s: float  # host seconds from start until both guests printed RIG-GUEST-READY
    run_s: float  # from releasing the client to both guests' exit status
    total_s: float


def run_pair(workdir: Path, server_command: str, client_command: str, timeout: float,
             image: guest_image.Image | None = None) -> Pair:
    """Boots both guests at once; the server command runs under rig_serve (it must listen on
    EXCHANGE_PORT), the client command is released once it does and gets the host's forwarded
    port as $PORT and the server's address as $SERVER. Raises guest.GuestError (console tails
    in the message) when a guest stalls past `timeout` seconds in all."""
    image = image or guest_image.build()
    start = time.monotonic()
    deadline = start + timeout
    for attempt in range(3):
        cable, tcp = guest.free_ports(2), guest.free_ports(1)[0]
        server = guest.Guest(image, f"rig_serve {EXCHANGE_PORT} {server_command}", workdir=workdir,
                             cable=guest.Cable(cable[0], cable[1]), address=SERVER,
                             forwards={tcp: EXCHANGE_PORT}, name="server")
        client = guest.Guest(image, f"PORT={tcp} SERVER={guest.HOST_FROM_GUEST}\nrig_wait_go && {client_command}",
                             workdir=workdir, cable=guest.Cable(cable[1], cable[0]), address=CLIENT,
                             name="client")
        try:
            server.start()
            client.start()
            server.wait_for(rf"^RIG-LISTENING {EXCHANGE_PORT}$", deadline - time.monotonic())
            client.wait_ready(deadline - time.monotonic())
            boot = max(server.ready_at or 0, client.ready_at or 0)
            released = time.monotonic()
            client.go()
            client_status = client.wait_exit(deadline - time.monotonic())
            server_status = server.wait_exit(max(10.0, deadline - time.monotonic()))
            end = time.monotonic()
            return Pair(server, client, server_status, client_status, boot, end - released, end - start)
        except guest.PortInUse:
            if attempt == 2:
                raise
        finally:
            client.kill()
            server.kill()
    raise AssertionError("unreachable")


# --- what the programs print ---------------------------------------------------------------

@dataclass(frozen=True)
class QueuePair:
    qpn: int
    psn: int
    rkey: int | None = None
    va: int | None = None


def rc_pingpong_local(console: str) -> QueuePair:
    # rc_pingpong.c: "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n"
    m = re.search(r"^  local address:  LID 0x[0-9a-f]{4}, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\S+)$",
                  console, re.M)
    if not m:
        raise AssertionError("ibv_rc_pingpong printed no local address line")
    return QueuePair(int(m.group(1), 16), int(m.group(2), 16))


def perftest_local(console: str) -> QueuePair:
    # perftest_communication.c ctx_print_pingpong_data: " local address: LID %#04x QPN %#06x
    # PSN %#06x", then for READ/WRITE " RKey %#08x VAddr %#016Lx" (OUT %#04x first for READ)
    m = re.search(r"^ local address: LID \S+ QPN (0x[0-9a-f]+) PSN (0x[0-9a-f]+)"
                  r"(?: OUT 0x[0-9a-f]+)?(?: RKey (0x[0-9a-f]+) VAddr (0x[0-9a-f]+))?", console, re.M)
    if not m:
        raise AssertionError("perftest printed no local address line")
    rkey, va = (int(m.group(3), 16), int(m.group(4), 16)) if m.group(3) else (None, None)
    return QueuePair(int(m.group(1), 16), int(m.group(2), 16), rkey, va)


# perftest measures the CPU's clock against gettimeofday before its report and gives up
# ("Can't produce a report", exit 1) where the correlation falls below 0.9 (perftest's
# src/get_clock.c, sample_get_cpu_mhz), as a guest under TCG on a loaded host may: it says
# nothing about the cable or the RDMA stacks, and a run again measures afresh.
CLOCK_UNMEASURED = "Correlation coefficient r^2"


def clock_unmeasured(console: str) -> bool:
    return CLOCK_UNMEASURED in console

#!/usr/bin/env python3
"""rig's driver and model against Linux's rxe in a QEMU guest (one ctest per case):

    rig_rxe_test.py WORKDIR BINDIR rc_pingpong rig-server|rig-client SIZE ITERS
    rig_rxe_test.py WORKDIR BINDIR ib_send_bw|ib_read_bw rig-server|rig-client SIZE ITERS

BINDIR holds rig_rc_pingpong and rig_perftest. rig runs on the host with the port 10.77.0.1
(MAC 02:00:0a:4d:00:01) on a datagram cable to the guest's RoCE NIC (10.77.0.2); the other
end runs rdma-core's ibv_rc_pingpong -g 1 -m 1024, or perftest's ib_send_bw / ib_read_bw
-x 1 -m 1024, with the same SIZE and ITERS. rig-server: rig listens on a host port the guest
reaches at 10.0.2.2; rig-client: the guest's program listens behind a hostfwd port. For
ib_read_bw the client reads the server's buffer: rig-server has rxe read a rig region,
rig-client has rig's Qp::post of a Read read an rxe region.

Both ends must exit 0 and print their closing lines; then the guest's capture of the cable
must hold ARP between the two and RoCEv2 only, every RoCE frame with a correct ICRC
(capture.icrc, computed as rxe computes it), rig's packets with rig's addresses, rxe's QPN,
the PSNs from rig's printed PSN, each message's opcodes, payload lengths and pad, AckReq on
each last packet, and rxe's with rxe's rules (rxe_pair_test.py). On failure it prints both
consoles and the capture's last frames. Exits 77 (skipped) only where QEMU or Debian's
packages cannot be had.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import capture
import guest
import rxe_pair
import rxe_pair_test
from rxe_pair_test import Failed, expect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))

RIG = guest.Address(mac="02:00:0a:4d:00:01", ip="10.77.0.1")  # rig's MAC: 02:00 and its IPv4 address
RXE = guest.Address(mac="52:54:00:00:00:02", ip="10.77.0.2")
EXCHANGE_PORT = 18515


def commands(program: str, size: int, iters: int) -> tuple[str, list[str]]:
    """The guest's program and options, and rig's (program file, options)."""
    if program == "rc_pingpong":
        options = f"-g 1 -s {size} -n {iters} -m 1024"
        return f"ibv_rc_pingpong {options}", ["rig_rc_pingpong"] + options.split()
    options = f"-x 1 -s {size} -n {iters} -m 1024"
    return f"{program} {options}", ["rig_perftest", program] + options.split()


def run(workdir: Path, bindir: Path, program: str, role: str, size: int, iters: int, image) -> tuple:
    """Runs both ends; (guest, rig's status, rig's output, guest's status, seconds)."""
    guest_command, rig_command = commands(program, size, iters)
    rig_command = [str(bindir / rig_command[0])] + rig_command[1:]
    timeout = 240 + size * iters / 1e5
    for attempt in range(3):
        guest_port, rig_port, tcp = guest.free_ports(3)
        cable = ["--cable", f"{rig_port}:127.0.0.1:{guest_port}"]
        start = time.monotonic()
        rig = None
        if role == "rig-client":
            g = guest.Guest(image, f"rig_serve {EXCHANGE_PORT} {guest_command}", workdir=workdir,
                            cable=guest.Cable(guest_port, rig_port), address=RXE, forwards={tcp: EXCHANGE_PORT})
        else:
            rig = subprocess.Popen(rig_command + cable + ["-p", str(tcp)], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
            g = guest.Guest(image, f"{guest_command} -p {tcp} {guest.HOST_FROM_GUEST}", workdir=workdir,
                            cable=guest.Cable(guest_port, rig_port), address=RXE)
        try:
            g.start()
            if role == "rig-client":
                g.wait_for(rf"^RIG-LISTENING {EXCHANGE_PORT}$", timeout)
                rig = subprocess.Popen(rig_command + cable + ["-p", str(tcp), "127.0.0.1"], stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True)
            guest_status = g.wait_exit(max(10.0, timeout - (time.monotonic() - start)))
            out, _ = rig.communicate(timeout=max(10.0, timeout - (time.monotonic() - start)))
            return g, rig.returncode, out, guest_status, time.monotonic() - start
        except guest.PortInUse:
            if attempt == 2:
                raise
        finally:
            g.kill()
            if rig is not None and rig.poll() is None:
                rig.kill()
                rig.communicate()
    raise AssertionError("unreachable")


def check_cable(everything: list[capture.Frame], where: str) -> None:
    """ARP between rig and rxe and RoCEv2, nothing else; every ARP request on the cable for
    the other's address answered (rig asks before RTR; rxe asks when its QP moves to RTR)."""
    arp = [f for f in everything if f.protocols == "eth:ethertype:arp"]
    others = [f for f in everything if f.opcode is None and f not in arp]
    expect(not others, f"{where}: {len(others)} frames neither ARP nor RoCEv2, the first "
           f"{others[0].number if others else 0}: {others[0].protocols if others else ''}")
    requests = [f for f in arp if f.arp_opcode == 1]
    expect(any(f.arp_sender == RIG.ip and f.arp_target == RXE.ip and f.eth_src == RIG.mac for f in requests),
           f"{where}: rig never asked for {RXE.ip}'s MAC")
    for r in requests:
        expect({r.arp_sender, r.arp_target} == {RIG.ip, RXE.ip}, f"{where}: ARP frame {r.number} asks "
               f"{r.arp_target} for {r.arp_sender}")
        expect(any(f.arp_opcode == 2 and f.arp_sender == r.arp_target and f.arp_target == r.arp_sender and
                   f.number > r.number for f in arp), f"{where}: ARP request frame {r.number} unanswered")
    for f in arp:
        if f.arp_opcode == 2 and f.arp_sender == RIG.ip:
            expect(f.eth_src == RIG.mac, f"{where}: rig's ARP reply frame {f.number} from {f.eth_src}")


def scapy_bad_icrcs(pcap: Path) -> list[int] | None:
    """The frames whose ICRC scapy's RoCE layer (tests/support/roce_check.py) computes
    otherwise; None where scapy cannot be imported (python3-scapy, tools/deps.sh)."""
    try:
        import roce_check
        icrcs = roce_check.scapy_icrcs(str(pcap))
    except ImportError:
        return None
    return [n for n, (carried, computed, who) in enumerate(icrcs, start=1) if who == "scapy" and carried != computed]


def check(program: str, role: str, size: int, iters: int, g: guest.Guest, rig_out: str) -> int:
    everything = capture.frames(g.pcap)
    roce = capture.roce(everything)
    bad = capture.bad_icrcs(g.pcap)
    expect(not bad, f"{len(bad)} RoCE frames with a wrong ICRC, the first {bad[:5]} "
           f"({sum(1 for f in roce if f.ip_src == RIG.ip)} of rig's frames on the cable)")
    bad = scapy_bad_icrcs(g.pcap)
    if bad is None:
        print("note: scapy not found; the ICRCs were checked by capture.icrc (zlib) only")
    expect(not bad, f"scapy computes other ICRCs for {len(bad or [])} frames, the first {(bad or [])[:5]}")
    check_cable(everything, "the guest's capture")
    rig_side = {f.ip_src for f in roce} - {RXE.ip}
    expect(rig_side <= {RIG.ip}, f"RoCE frames from {rig_side - {RIG.ip}}")
    rig_rule = {"ack_rule": rxe_pair_test.last_packets_ask, "rxe_ips": {RXE.ip}}
    if program == "rc_pingpong":
        rig_qp, rxe_qp = rxe_pair.rc_pingpong_local(rig_out), rxe_pair.rc_pingpong_local(g.console)
        for text, name in ((rig_out, "rig"), (g.console, "rxe")):
            expect(re.search(rf"^{2 * size * iters} bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$", text, re.M) is not None,
                   f"{name} did not report {2 * size * iters} bytes")
            expect(re.search(rf"^{iters} iters in [0-9.]+ seconds = [0-9.]+ usec/iter$", text, re.M) is not None,
                   f"{name} did not report {iters} iters")
        resent = rxe_pair_test.check_sends(roce, roce, RIG, rig_qp, RXE, rxe_qp, iters, size, "rig's SENDs", **rig_rule)
        resent += rxe_pair_test.check_sends(roce, roce, RXE, rxe_qp, RIG, rig_qp, iters, size, "rxe's SENDs",
                                            rxe_ips={RXE.ip})
        return resent
    rig_qp, rxe_qp = rxe_pair.perftest_local(rig_out), rxe_pair.perftest_local(g.console)
    for text, name in ((rig_out, "rig"), (g.console, "rxe")):
        expect(re.search(rf"^ {size}\s+{iters}\s+[0-9.]+\s+[0-9.]+", text, re.M) is not None,
               f"{name} printed no result row for {size} bytes x {iters}")
    rig_client = role == "rig-client"
    client, server = (RIG, RXE) if rig_client else (RXE, RIG)
    client_qp, server_qp = (rig_qp, rxe_qp) if rig_client else (rxe_qp, rig_qp)
    if program == "ib_send_bw":
        rule = rig_rule if rig_client else {"rxe_ips": {RXE.ip}}
        resent = rxe_pair_test.check_sends(roce, roce, client, client_qp, server, server_qp, iters, size, "sends", **rule)
        expect(all(f.opcode == capture.ACKNOWLEDGE for f in roce if f.ip_src == server.ip),
               f"the server {server.ip} sent more than ACKs")
        return resent
    expect(server_qp.rkey is not None, "the server printed no RKey")
    return rxe_pair_test.check_reads(roce, roce, server_qp, client_qp, iters, size, "reads", client=client, server=server,
                                     rxe_ips={RXE.ip})


def main(argv: list[str]) -> int:
    if (len(argv) != 7 or argv[3] not in ("rc_pingpong", "ib_send_bw", "ib_read_bw") or
            argv[4] not in ("rig-server", "rig-client")):
        print(__doc__, file=sys.stderr)
        return 2
    workdir, bindir, program, role = Path(argv[1]), Path(argv[2]), argv[3], argv[4]
    size, iters = int(argv[5]), int(argv[6])
    image = guest.image_or_skip()
    if image is None:
        return guest.SKIPPED
    workdir.mkdir(parents=True, exist_ok=True)
    where = f"{program} {role} -s {size} -n {iters}"
    g, rig_status, rig_out, guest_status, seconds = run(workdir, bindir, program, role, size, iters, image)
    if rxe_pair.clock_unmeasured(g.console):
        print(f"{where}: perftest could not measure the guest's clock (rxe_pair.CLOCK_UNMEASURED); once more")
        g, rig_status, rig_out, guest_status, seconds = run(workdir, bindir, program, role, size, iters, image)
    (workdir / "rig.out").write_text(rig_out)
    try:
        expect(rig_status == 0 and guest_status == 0, f"exit status rig {rig_status}, guest {guest_status}")
        resent = check(program, role, size, iters, g, rig_out)
    except (Failed, AssertionError) as e:
        print(f"FAILED: {where}: {e}\n--- rig:\n{rig_out[-4000:]}\n--- guest console:\n{g.tail(60)}\n"
              f"--- last frames of the guest's capture {g.pcap}:\n{capture.summary(g.pcap)}")
        return 1
    frames = len(capture.roce(capture.frames(g.pcap)))
    print(f"{where}: passed in {seconds:.1f} s (boot {g.ready_at or 0:.1f} s); {frames} RoCE frames, "
          f"{resent} sent again or resumed")
    print("--- rig:\n" + rig_out + "--- guest:\n" + "\n".join(
        line for line in g.console.splitlines() if not line.startswith("[")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

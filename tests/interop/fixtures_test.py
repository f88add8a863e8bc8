#!/usr/bin/env python3
"""Checks tests/interop/fixtures/ (frames Linux's rxe really sent; fixtures/README.md) as
tshark decodes them, each RoCE capture against the TCP exchange of the same run: the QPNs,
PSNs, rkey and address the programs exchanged are the ones in the RoCE headers, and every
header field that does not change from run to run has rxe's value. No guest is started.

    fixtures_test.py [FIXTURES_DIR]
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import capture
from capture import Frame

HERE = Path(__file__).resolve().parent
SERVER_MAC, CLIENT_MAC = "52:54:00:00:00:02", "52:54:00:00:00:03"
SERVER_IP, CLIENT_IP = "10.77.0.2", "10.77.0.3"
GUEST_TCP_IP = "10.0.2.15"  # the client guest's user-mode NIC; the server is 10.0.2.2 from there

failures: list[str] = []


def expect(condition: bool, what: str) -> None:
    if not condition:
        failures.append(what)


def streams(pcap: Path) -> tuple[bytes, bytes]:
    """The TCP payload bytes the client wrote and the ones it read (tshark's follow,tcp,raw)."""
    r = subprocess.run(["tshark", "-n", "-r", str(pcap), "-q", "-z", "follow,tcp,raw,0"],
                       capture_output=True, text=True, check=True)
    body = r.stdout.split("=" * 67)[1]
    first_node = re.search(r"^Node 0: (\S+):\d+$", body, re.M).group(1)
    out, back = bytearray(), bytearray()
    for line in body.splitlines():
        if not re.fullmatch(r"\t?[0-9a-f]+", line):
            continue
        # tshark indents the second node's data with a tab
        (back if line.startswith("\t") else out).extend(bytes.fromhex(line.strip()))
    if first_node != GUEST_TCP_IP:
        out, back = back, out
    return bytes(out), bytes(back)


def take(stream: bytes, at: int, n: int) -> tuple[bytes, int]:
    return stream[at:at + n], at + n


# rc_pingpong.c: "%04x:%06x:%06x:%s" (LID, QPN, PSN, GID as 32 hex digits) and a NUL.
RC_RECORD = re.compile(rb"([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32})\0")
# perftest: "%04x:%04x:%06x:%06x:%08x:%016llx:" (LID, out_reads, QPN, PSN, rkey, VA), the GID
# as 16 "%02x" joined by ':', ":%08x:" (SRQN) and a NUL: 108 bytes.
PERF_RECORD = re.compile(rb"([0-9a-f]{4}):([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{8}):"
                         rb"([0-9a-f]{16}):((?:[0-9a-f]{2}:){16})([0-9a-f]{8}):\0")


def rc_records(fixtures: Path) -> tuple[dict, dict]:
    out, back = streams(fixtures / "rc_pingpong_exchange.pcap")
    expect(len(out) == 57 and len(back) == 52, f"rc_pingpong exchange: the client wrote {len(out)} bytes "
           f"(52 + done\\0 is 57) and read {len(back)} (52)")
    expect(out[52:] == b"done\0", f"rc_pingpong exchange: the client's last bytes are {out[52:]!r}")
    records = []
    for stream, ip in ((out, CLIENT_IP), (back, SERVER_IP)):
        m = RC_RECORD.fullmatch(stream[:52])
        expect(m is not None, f"rc_pingpong exchange: {stream[:52]!r} is no record")
        if not m:
            return {}, {}
        gid = bytes.fromhex(m.group(4).decode())
        expect(gid == bytes(10) + b"\xff\xff" + bytes(map(int, ip.split("."))),
               f"rc_pingpong exchange: GID {gid.hex()} is not ::ffff:{ip}")
        records.append({"qpn": int(m.group(2), 16), "psn": int(m.group(3), 16)})
    return records[0], records[1]


def perftest_records(pcap: Path, what: str, report: bool) -> tuple[dict, dict]:
    out, back = streams(pcap)
    for stream, who in ((out, "client"), (back, "server")):
        version, at = take(stream, 0, 16)
        expect(version == b"6.06" + bytes(12), f"{what}: the {who}'s version is {version!r}")
        cycle, at = take(stream, at, 4)
        line, at = take(stream, at, 4)
        mtu, at = take(stream, at, 2)
        expect((cycle, line, mtu) == (b"\0\0\x10\0", b"\0\0\0\x40", b"3\0"),
               f"{what}: the {who}'s cycle buffer, cache line, MTU are {cycle.hex()} {line.hex()} {mtu!r}")
        records = []
        for _ in range(4):
            record, at = take(stream, at, 108)
            records.append(record)
        if report:  # ib_read_bw: the client's bandwidth report, five 8-byte fields each way
            _, at = take(stream, at, 40)
        record, at = take(stream, at, 108)
        records.append(record)
        expect(stream[at:] == b"done\0", f"{what}: the {who}'s stream ends {stream[at:]!r}, not done\\0")
        expect(len(set(records)) == 1, f"{what}: the {who}'s five records differ")
        m = PERF_RECORD.fullmatch(records[0])
        expect(m is not None, f"{what}: the {who}'s record {records[0]!r}")
        if not m:
            return {}, {}
        if who == "client":
            client = m
        else:
            server = m
    def fields(m):
        return {"out_reads": int(m.group(2), 16), "qpn": int(m.group(3), 16), "psn": int(m.group(4), 16),
                "rkey": int(m.group(5), 16), "va": int(m.group(6), 16), "gid": m.group(7)}
    return fields(client), fields(server)


def check_roce_common(frames: list[Frame], what: str) -> None:
    for f in frames:
        expect(f.udp_dst == capture.ROCE_PORT and f.p_key == 0xFFFF, f"{what}: frame {f.number} port/P_Key")
        expect(f.udp_src == capture.rxe_udp_sport(0x11, 0x11), f"{what}: frame {f.number} UDP source {f.udp_src}")
        expect(f.dest_qp == 0x11, f"{what}: frame {f.number} QP {f.dest_qp:#x} (rxe's first QPN is 0x11)")
        expect((f.ip_src, f.eth_src) in ((CLIENT_IP, CLIENT_MAC), (SERVER_IP, SERVER_MAC)),
               f"{what}: frame {f.number} from {f.eth_src} {f.ip_src}")


def psn(n: int) -> int:
    return n & 0xFFFFFF


def rows(frames: list[Frame]) -> list[tuple]:
    return [(f.ip_src, f.opcode, f.psn, f.ack_request, f.pad, f.payload, f.syndrome, f.msn, f.length) for f in frames]


def check(fixtures: Path) -> None:
    arp = capture.read_pcap(fixtures / "arp.pcap")[1]
    request = bytes.fromhex("ffffffffffff" "525400000002" "0806" "0001" "0800" "06" "04" "0001"
                            "525400000002" "0a4d0002" "000000000000" "0a4d0003")
    reply = bytes.fromhex("525400000002" "525400000003" "0806" "0001" "0800" "06" "04" "0002"
                          "525400000003" "0a4d0003" "525400000002" "0a4d0002")
    expect([d for _, d in arp] == [request, reply], f"arp.pcap: {[d.hex() for _, d in arp]}")

    client, server = rc_records(fixtures)
    if client:
        f = capture.roce(capture.frames(fixtures / "rc_pingpong_4096.pcap"))
        check_roce_common(f, "rc_pingpong_4096")
        c, s = client["psn"], server["psn"]
        expect(client["qpn"] == server["qpn"] == 0x11, "rc_pingpong exchange: QPNs")
        want = [(ip, opcode, psn(first), *rest) for ip, opcode, first, *rest in [
                (CLIENT_IP, 0, c, False, 0, 1024, None, None, 1082), (CLIENT_IP, 1, c + 1, False, 0, 1024, None, None, 1082),
                (CLIENT_IP, 1, c + 2, False, 0, 1024, None, None, 1082), (CLIENT_IP, 2, c + 3, True, 0, 1024, None, None, 1082),
                (SERVER_IP, 17, c + 3, False, 0, 0, 0x1F, 1, 62),
                (SERVER_IP, 0, s, False, 0, 1024, None, None, 1082), (SERVER_IP, 1, s + 1, False, 0, 1024, None, None, 1082),
                (SERVER_IP, 1, s + 2, False, 0, 1024, None, None, 1082), (SERVER_IP, 2, s + 3, True, 0, 1024, None, None, 1082),
                (CLIENT_IP, 17, s + 3, False, 0, 0, 0x1F, 1, 62)]]
        expect(rows(f) == want, f"rc_pingpong_4096.pcap against the exchange's PSNs {c:#x}/{s:#x}:\n"
               f"  {rows(f)}\n  want {want}")

    f = capture.roce(capture.frames(fixtures / "rc_pingpong_1027.pcap"))
    check_roce_common(f, "rc_pingpong_1027")
    got = [(x.ip_src, x.opcode, x.ack_request, x.pad, x.payload, x.length) for x in f]
    expect(got == [(CLIENT_IP, 0, False, 0, 1024, 1082), (CLIENT_IP, 2, True, 1, 4, 62), (SERVER_IP, 17, False, 0, 0, 62),
                   (SERVER_IP, 0, False, 0, 1024, 1082), (SERVER_IP, 2, True, 1, 4, 62), (CLIENT_IP, 17, False, 0, 0, 62)],
           f"rc_pingpong_1027.pcap: {got} (a LAST of 3 bytes and one byte of pad)")
    expect(len(f) == 6 and f[1].psn == psn(f[0].psn + 1) and f[2].psn == f[1].psn and
           f[4].psn == psn(f[3].psn + 1) and f[5].psn == f[4].psn, "rc_pingpong_1027.pcap: PSNs")

    f = capture.roce(capture.frames(fixtures / "rc_pingpong_64.pcap"))
    check_roce_common(f, "rc_pingpong_64")
    for x in f:
        expect((x.opcode, x.payload, x.length, x.ack_request) in ((4, 64, 122, True), (17, 0, 62, False)),
               f"rc_pingpong_64.pcap: frame {x.number} {(x.opcode, x.payload, x.length, x.ack_request)}")
    for ip in (CLIENT_IP, SERVER_IP):
        psns = [x.psn for x in f if x.ip_src == ip and x.opcode == 4]
        expect(all(b - a in (0, 1) for a, b in zip(psns, psns[1:])), f"rc_pingpong_64.pcap: {ip}'s PSNs {psns}")

    client, server = perftest_records(fixtures / "ib_send_bw_exchange.pcap", "ib_send_bw exchange", report=False)
    if client:
        expect(client["out_reads"] == server["out_reads"] == 1, "ib_send_bw exchange: out_reads")
        f = capture.roce(capture.frames(fixtures / "ib_send_bw_4096.pcap"))
        check_roce_common(f, "ib_send_bw_4096")
        got = [(x.ip_src, x.opcode, psn(x.psn - client["psn"]), x.ack_request, x.payload) for x in f]
        want = [(CLIENT_IP, [0, 1, 1, 2][i % 4], i, i % 4 == 3, 1024) for i in range(10)]
        expect(got == want, f"ib_send_bw_4096.pcap from the exchanged PSN {client['psn']:#x}: {got}")

    client, server = perftest_records(fixtures / "ib_read_bw_exchange.pcap", "ib_read_bw exchange", report=True)
    if client:
        expect(client["out_reads"] == server["out_reads"] == 0x80, "ib_read_bw exchange: out_reads (rxe's 128)")
        f = capture.roce(capture.frames(fixtures / "ib_read_bw_4096.pcap"))
        check_roce_common(f, "ib_read_bw_4096")
        requests = [(x.ip_src, x.opcode, psn(x.psn - client["psn"]), x.va, x.rkey, x.dma_length, x.length)
                    for x in f if x.opcode == capture.READ_REQUEST]
        expect(requests == [(CLIENT_IP, 12, 4 * i, server["va"], server["rkey"], 4096, 74) for i in range(5)],
               f"ib_read_bw_4096.pcap: the read requests {requests} against the server's rkey "
               f"{server['rkey']:#x} and VA {server['va']:#x}")
        responses = [(x.ip_src, x.opcode, psn(x.psn - client["psn"]), x.syndrome, x.msn, x.payload, x.length)
                     for x in f if x.opcode != capture.READ_REQUEST]
        expect(responses == [(SERVER_IP, 13, 0, 0x1F, 1, 1024, 1086), (SERVER_IP, 14, 1, None, None, 1024, 1082),
                             (SERVER_IP, 14, 2, None, None, 1024, 1082), (SERVER_IP, 15, 3, 0x1F, 1, 1024, 1086),
                             (SERVER_IP, 13, 4, 0x1F, 2, 1024, 1086)],
               f"ib_read_bw_4096.pcap: the responses {responses}")


def check_icrcs(fixtures: Path) -> None:
    """capture.icrc, the ICRC the rig tests check rig's frames with, gives every RoCE frame rxe
    sent its ICRC, and no longer does once a payload bit or a BTH field under the CRC changes;
    the fields the CRC masks (TTL) may change."""
    count = 0
    for pcap in sorted(fixtures.glob("*.pcap")):
        expect(capture.bad_icrcs(pcap) == [], f"{pcap.name}: frames {capture.bad_icrcs(pcap)} fail capture.icrc")
        for _, frame in capture.read_pcap(pcap)[1]:
            want = capture.icrc(frame)
            if want is None:
                continue
            count += 1
            flipped = bytearray(frame)
            flipped[-5] ^= 0x01  # the last byte before the ICRC
            expect(capture.icrc(bytes(flipped)) != want, f"{pcap.name}: a flipped payload bit keeps the ICRC")
            ttl = bytearray(frame)
            ttl[14 + 8] ^= 0x3F
            expect(capture.icrc(bytes(ttl)) == want, f"{pcap.name}: the TTL changes the ICRC")
    expect(count == 44, f"{count} RoCE frames in the fixtures, not 44")


def main(argv: list[str]) -> int:
    if capture.tshark() is None:
        print("FAILED: tshark not found (tools/deps.sh installs it)")
        return 1
    fixtures = Path(argv[1]) if len(argv) > 1 else HERE / "fixtures"
    check(fixtures)
    check_icrcs(fixtures)
    for f in failures:
        print(f"FAILED: {f}")
    if not failures:
        print("fixtures: passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

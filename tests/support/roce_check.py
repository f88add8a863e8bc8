#!/usr/bin/env python3
"""Checks a capture of RoCEv2 traffic against dissectors no one in rig wrote.

    roce_check.py PCAP --expect SOURCE:OPCODES [--expect ...]

- tshark (Wireshark's dissector) must decode every frame as RoCEv2 (IP, UDP to port 4791,
  InfiniBand BTH) without a malformed-packet or error-level expert item; its heuristic
  RPC-over-RDMA dissector is turned off, as it takes any SEND payload for its own;
- scapy's RoCE layer (scapy.contrib.roce, BTH.compute_icrc) must compute the ICRC each IPv4
  frame carries (scapy does not do IPv6: those are computed here with zlib.crc32 over the
  fields IBA annex A17.3.3 masks, as Linux's rxe_icrc.c does);
- the frames each SOURCE (an IP address, as tshark prints it) sends are, in order, exactly
  OPCODES: a comma-separated list of IBA RC opcode names (SEND_FIRST, RDMA_READ_REQUEST,
  ACKNOWLEDGE, ...), each optionally followed by *N (N times) or *+ (one or more), the
  whole list optionally followed by a repeat count in brackets: "SEND_FIRST,SEND_LAST[4]";
- PSNs as tshark reads them: a source's SEND, RDMA WRITE and RDMA READ RESPONSE packets go
  up by one each (24-bit), its READ requests go up, and every ACKNOWLEDGE carries a PSN its
  peer sent.

Exit 0 when everything holds, 1 with one line per failure, 2 for a bad command line, 77
(skipped) where tshark or scapy is not installed (tools/deps.sh installs both).
"""
import argparse
import re
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77

# IBA vol. 1 Table 38, the RC opcodes.
RC_OPCODES = {
    "SEND_FIRST": 0x00, "SEND_MIDDLE": 0x01, "SEND_LAST": 0x02, "SEND_LAST_WITH_IMMEDIATE": 0x03,
    "SEND_ONLY": 0x04, "SEND_ONLY_WITH_IMMEDIATE": 0x05, "RDMA_WRITE_FIRST": 0x06, "RDMA_WRITE_MIDDLE": 0x07,
    "RDMA_WRITE_LAST": 0x08, "RDMA_WRITE_LAST_WITH_IMMEDIATE": 0x09, "RDMA_WRITE_ONLY": 0x0A,
    "RDMA_WRITE_ONLY_WITH_IMMEDIATE": 0x0B, "RDMA_READ_REQUEST": 0x0C, "RDMA_READ_RESPONSE_FIRST": 0x0D,
    "RDMA_READ_RESPONSE_MIDDLE": 0x0E, "RDMA_READ_RESPONSE_LAST": 0x0F, "RDMA_READ_RESPONSE_ONLY": 0x10,
    "ACKNOWLEDGE": 0x11,
}
NAMES = {v: k for k, v in RC_OPCODES.items()}
STREAM = set(range(0x00, 0x0C)) | {0x0D, 0x0E, 0x0F, 0x10}  # one PSN per packet, consecutive
READ_REQUEST = 0x0C
ACKNOWLEDGE = 0x11
FIELDS = ["frame.number", "ip.src", "ipv6.src", "udp.dstport", "infiniband.bth.opcode", "infiniband.bth.psn",
          "_ws.malformed", "_ws.expert.severity"]


def parse_expect(text):
    """'10.0.0.1:SEND_FIRST,SEND_LAST[4]' -> ('10.0.0.1', [(opcode, count or '+'), ...])."""
    source, sep, spec = text.rpartition(":")
    if not sep or not source:
        raise ValueError(f"--expect {text!r}: not SOURCE:OPCODES")
    repeat = 1
    m = re.fullmatch(r"(.*)\[(\d+)\]", spec)
    if m:
        spec, repeat = m.group(1), int(m.group(2))
    items = []
    for item in spec.split(","):
        name, _, count = item.partition("*")
        if name not in RC_OPCODES:
            raise ValueError(f"--expect {text!r}: {name!r} is no RC opcode")
        if count == "+":
            items.append((RC_OPCODES[name], "+"))
        else:
            items.append((RC_OPCODES[name], int(count) if count else 1))
    return source, items * repeat


def matches(opcodes, items):
    """Whether the list of opcodes is exactly `items` (greedy for '+', which is enough for
    lists whose neighbouring items differ)."""
    at = 0
    for opcode, count in items:
        if count == "+":
            if at >= len(opcodes) or opcodes[at] != opcode:
                return False
            while at < len(opcodes) and opcodes[at] == opcode:
                at += 1
        else:
            for _ in range(count):
                if at >= len(opcodes) or opcodes[at] != opcode:
                    return False
                at += 1
    return at == len(opcodes)


def tshark_rows(pcap):
    command = ["tshark", "-r", pcap, "-n", "--disable-protocol", "rpcordma", "-T", "fields", "-E", "separator=\t",
               "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        command += ["-e", f]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"tshark -r {pcap}: exit {out.returncode}: {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        values = line.split("\t")
        values += [""] * (len(FIELDS) - len(values))
        rows.append(dict(zip(FIELDS, values)))
    return rows


def icrc_ipv6(frame):
    """The ICRC of a RoCEv2/IPv6 frame (annex A17.3.3; rxe_icrc.c rxe_icrc_hdr)."""
    head = bytearray(frame[14:14 + 40 + 8 + 12])
    head[0] |= 0x0F
    head[1:4] = b"\xff\xff\xff"   # traffic class, flow label
    head[7] = 0xFF                 # hop limit
    head[46:48] = b"\xff\xff"      # UDP checksum
    head[52] = 0xFF                # BTH resv8a
    crc = zlib.crc32(b"\xff" * 8 + bytes(head) + bytes(frame[14 + 60:-4]))
    return struct.pack("<I", crc)


def scapy_icrcs(pcap):
    """Per frame: (the ICRC carried, the ICRC scapy or zlib computes, who computed it)."""
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.contrib.roce import BTH
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6
    from scapy.utils import rdpcap
    out = []
    for packet in rdpcap(pcap):
        frame = bytes(packet)
        carried = frame[-4:]
        if packet.haslayer(IP) and packet.haslayer(BTH):
            out.append((carried, packet[BTH].compute_icrc(frame), "scapy"))
        elif packet.haslayer(IPv6):
            out.append((carried, icrc_ipv6(frame), "zlib"))
        else:
            out.append((carried, None, "none"))
    return out


def check(pcap, expects):
    failures = []
    rows = tshark_rows(pcap)
    if not rows:
        return [f"{pcap}: no frames"]
    icrcs = scapy_icrcs(pcap)
    if len(icrcs) != len(rows):
        failures.append(f"{pcap}: tshark read {len(rows)} frames, scapy {len(icrcs)}")
    by_source = {}
    sent_psns = {}
    for i, row in enumerate(rows):
        where = f"frame {row['frame.number']}"
        source = row["ip.src"] or row["ipv6.src"]
        severities = row["_ws.expert.severity"].split(",")
        if row["_ws.malformed"] or "8388608" in severities:  # PI_ERROR
            failures.append(f"{where}: tshark finds it malformed or in error")
        if row["udp.dstport"] != "4791" or not row["infiniband.bth.opcode"]:
            failures.append(f"{where}: tshark does not decode it as RoCEv2 (UDP port {row['udp.dstport'] or '-'})")
            continue
        opcode = int(row["infiniband.bth.opcode"])
        psn = int(row["infiniband.bth.psn"])
        by_source.setdefault(source, []).append((opcode, psn, row))
        if opcode != ACKNOWLEDGE:
            sent_psns.setdefault(source, set()).add(psn)
        if i < len(icrcs):
            carried, computed, who = icrcs[i]
            if computed is None:
                failures.append(f"{where}: no ICRC to compute (neither IPv4 nor IPv6)")
            elif carried != computed:
                failures.append(f"{where}: ICRC {carried.hex()} carried, {computed.hex()} by {who}")
    for source, frames in by_source.items():
        previous = previous_read = None
        for opcode, psn, row in frames:
            where = f"frame {row['frame.number']} from {source}"
            if opcode in STREAM:
                if previous is not None and psn != (previous + 1) & 0xFFFFFF:
                    failures.append(f"{where}: PSN {psn} after {previous}")
                previous = psn
            elif opcode == READ_REQUEST:
                # Each asks for as many PSNs as it has responses: the next lies beyond.
                if previous_read is not None and not 0 < ((psn - previous_read) & 0xFFFFFF) < 0x800000:
                    failures.append(f"{where}: READ request PSN {psn} not after {previous_read}")
                previous_read = psn
        peers = [s for s in by_source if s != source]
        for opcode, psn, row in frames:
            if opcode == ACKNOWLEDGE and not any(psn in sent_psns.get(p, set()) for p in peers):
                failures.append(f"frame {row['frame.number']} from {source}: ACKNOWLEDGE of PSN {psn}, which no peer sent")
    for source, items in expects:
        opcodes = [opcode for opcode, _, _ in by_source.get(source, [])]
        if not matches(opcodes, items):
            shown = ",".join(NAMES.get(o, hex(o)) for o in opcodes[:40]) + (",..." if len(opcodes) > 40 else "")
            failures.append(f"{source} sent {len(opcodes)} frames, not those expected: {shown}")
    unexpected = set(by_source) - {s for s, _ in expects}
    if expects and unexpected:
        failures.append(f"frames from {', '.join(sorted(unexpected))}, which no --expect names")
    return failures


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pcap")
    parser.add_argument("--expect", action="append", default=[], metavar="SOURCE:OPCODES")
    args = parser.parse_args(argv)
    try:
        expects = [parse_expect(e) for e in args.expect]
    except ValueError as e:
        print(f"roce_check: {e}", file=sys.stderr)
        return 2
    if shutil.which("tshark") is None:
        print("roce_check: skipped: no tshark (tools/deps.sh installs it)")
        return SKIP
    try:
        import scapy.contrib.roce  # noqa: F401
    except ImportError:
        print(f"roce_check: skipped: no scapy for {sys.executable} (Debian's python3-scapy, tools/deps.sh)")
        return SKIP
    failures = check(args.pcap, expects)
    for f in failures:
        print(f"roce_check: {args.pcap}: {f}")
    if not failures:
        print(f"roce_check: {args.pcap}: every frame RoCEv2 to tshark, every ICRC the one scapy (IPv6: zlib) computes, opcodes and PSNs as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

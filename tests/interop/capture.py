"""Reading the interop tests' captures with tshark (Wireshark's RRoCE dissector on UDP 4791)
and small pcap helpers: the frames a dissector decoded, as the tests assert them.

icrc() computes the ICRC as Linux's rxe does (docs/interop.md: it agreed with scapy's on
every frame of every run), without scapy.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

# IBA Vol 1 Table 38 (RC opcodes).
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY = 0x00, 0x01, 0x02, 0x04
READ_REQUEST = 0x0C
READ_RESPONSE_FIRST, READ_RESPONSE_MIDDLE, READ_RESPONSE_LAST, READ_RESPONSE_ONLY = 0x0D, 0x0E, 0x0F, 0x10
ACKNOWLEDGE = 0x11
# AETH syndrome (IBA 9.7.5.1.4): ACK with credit 0b11111 (unlimited, as rxe sends it), and
# the NAK "PSN sequence error".
SYNDROME_ACK = 0x1F
SYNDROME_NAK_PSN_SEQUENCE = 0x60
ROCE_PORT = 4791

FIELDS = ["frame.number", "frame.len", "frame.protocols", "eth.src", "eth.dst",
          "arp.opcode", "arp.src.proto_ipv4", "arp.dst.proto_ipv4", "ip.src", "ip.dst",
          "udp.srcport", "udp.dstport", "infiniband.bth.opcode", "infiniband.bth.a",
          "infiniband.bth.padcnt", "infiniband.bth.p_key", "infiniband.bth.destqp",
          "infiniband.bth.psn", "infiniband.aeth.syndrome", "infiniband.aeth.msn",
          "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen", "data.len"]


# Protocols Wireshark may find by heuristics in a SEND's payload (infiniband.payload), which
# then hide the payload's length: a run of zero-filled SENDs of 64 KiB is taken for RPC over
# RDMA and its LAST packet shows no data. The tests read payloads as bytes only.
NOT_PAYLOADS = [a for p in ("rpcordma", "smb_direct", "nvme-rdma", "lnet", "iser", "infiniband_sdp", "fcoib", "smc")
                for a in ("--disable-protocol", p)]


def tshark() -> str | None:
    return shutil.which("tshark")


@dataclass(frozen=True)
class Frame:
    """One frame as tshark decoded it. The RoCE fields are None for a frame that is no RoCEv2
    (`protocols` says what it is then, e.g. "eth:ethertype:arp")."""
    number: int
    length: int
    protocols: str
    eth_src: str
    eth_dst: str
    arp_opcode: int | None
    arp_sender: str
    arp_target: str
    ip_src: str
    ip_dst: str
    udp_src: int | None
    udp_dst: int | None
    opcode: int | None
    ack_request: bool
    pad: int | None
    p_key: int | None
    dest_qp: int | None
    psn: int | None
    syndrome: int | None
    msn: int | None
    va: int | None
    rkey: int | None
    dma_length: int | None
    payload: int  # bytes after the RoCE headers, pad included, ICRC not


def _int(text: str) -> int | None:
    return int(text, 0) if text else None


def frames(pcap: Path) -> list[Frame]:
    """Every frame of `pcap`, decoded by tshark in one pass."""
    if tshark() is None:
        raise FileNotFoundError("tshark not found (Debian package tshark)")
    args = ["tshark", "-n", "-r", str(pcap), *NOT_PAYLOADS, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    r = subprocess.run(args, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"tshark -r {pcap}: {r.stderr.strip()}")
    out = []
    for line in r.stdout.splitlines():
        v = dict(zip(FIELDS, line.split("\t")))
        roce = bool(v["infiniband.bth.opcode"])
        out.append(Frame(
            number=int(v["frame.number"]), length=int(v["frame.len"]), protocols=v["frame.protocols"],
            eth_src=v["eth.src"], eth_dst=v["eth.dst"], arp_opcode=_int(v["arp.opcode"]),
            arp_sender=v["arp.src.proto_ipv4"], arp_target=v["arp.dst.proto_ipv4"],
            ip_src=v["ip.src"], ip_dst=v["ip.dst"],
            udp_src=_int(v["udp.srcport"]), udp_dst=_int(v["udp.dstport"]),
            opcode=_int(v["infiniband.bth.opcode"]), ack_request=v["infiniband.bth.a"] in ("1", "True"),
            pad=_int(v["infiniband.bth.padcnt"]), p_key=_int(v["infiniband.bth.p_key"]),
            dest_qp=_int(v["infiniband.bth.destqp"]), psn=_int(v["infiniband.bth.psn"]),
            syndrome=_int(v["infiniband.aeth.syndrome"]), msn=_int(v["infiniband.aeth.msn"]),
            va=_int(v["infiniband.reth.va"]), rkey=_int(v["infiniband.reth.r_key"]),
            dma_length=_int(v["infiniband.reth.dmalen"]), payload=int(v["data.len"] or 0) if roce else 0))
    return out


def roce(all_frames: list[Frame]) -> list[Frame]:
    """The RoCEv2 frames (InfiniBand BTH on UDP 4791, as Wireshark's RRoCE dissector finds them)."""
    return [f for f in all_frames if f.opcode is not None]


def summary(pcap: Path, count: int = 30) -> str:
    """tshark's one-line summaries of the last `count` frames (for a failing test's message)."""
    if tshark() is None:
        return "(no tshark)"
    r = subprocess.run(["tshark", "-n", "-r", str(pcap), *NOT_PAYLOADS], capture_output=True,
                       text=True, check=False)
    return "\n".join(r.stdout.splitlines()[-count:])


def rxe_udp_sport(lqpn: int, rqpn: int) -> int:
    """The UDP source port rxe uses for a QP: rdma_get_udp_sport(rdma_calc_flow_label(lqpn,
    rqpn), ...) of Linux's include/rdma/ib_verbs.h, as rxe's rxe_prepare4 calls it."""
    v = lqpn * rqpn
    v ^= v >> 20
    v ^= v >> 40
    flow_label = v & 0xFFFFF
    return 0xC000 | ((flow_label & 0x3FFF) ^ (flow_label >> 14))


# --- pcap files (libpcap format, as QEMU's filter-dump writes it) ------------------------------

def read_pcap(path: Path) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The global header and each record's (header, data) of a little-endian microsecond pcap."""
    data = Path(path).read_bytes()
    if data[:4] != b"\xd4\xc3\xb2\xa1":
        raise ValueError(f"{path}: not a little-endian microsecond pcap file")
    header, records, at = data[:24], [], 24
    while at + 16 <= len(data):
        record = data[at:at + 16]
        caplen = struct.unpack_from("<I", record, 8)[0]
        records.append((record, data[at + 16:at + 16 + caplen]))
        at += 16 + caplen
    return header, records


def write_pcap(path: Path, header: bytes, records: list[tuple[bytes, bytes]]) -> None:
    with open(path, "wb") as f:
        f.write(header)
        for record, frame in records:
            f.write(record + frame)


# --- the ICRC (IBA annex A17.3.3; Linux's rxe_icrc.c) -------------------------------------------

def icrc(frame: bytes) -> int | None:
    """The ICRC a RoCEv2-over-IPv4 frame must end with, or None for a frame that is none:
    CRC-32 (zlib's) over 8 bytes of 0xFF, then the IPv4 header with TOS, TTL and checksum all
    ones, the UDP header with its checksum all ones, the BTH with its byte 4 (FECN, BECN,
    reserved) all ones, and the rest up to the ICRC (payload and pad). Stored little-endian as
    the frame's last 4 bytes."""
    if len(frame) < 14 + 20 + 8 + 12 + 4 or frame[12:14] != b"\x08\x00":
        return None
    ip = bytearray(frame[14:])
    header = (ip[0] & 0x0F) * 4
    if ip[9] != 17 or struct.unpack_from(">H", ip, header + 2)[0] != ROCE_PORT:
        return None
    total = struct.unpack_from(">H", ip, 2)[0]
    ip = ip[:total]
    ip[1] = 0xFF                    # TOS
    ip[8] = 0xFF                    # TTL
    ip[10:12] = b"\xff\xff"         # header checksum
    ip[header + 6:header + 8] = b"\xff\xff"  # UDP checksum
    ip[header + 8 + 4] = 0xFF       # BTH byte 4
    return zlib.crc32(b"\xff" * 8 + bytes(ip[:-4])) & 0xFFFFFFFF


def bad_icrcs(pcap: Path) -> list[int]:
    """The numbers (from 1, as tshark's) of the RoCEv2-over-IPv4 frames of `pcap` whose last 4
    bytes are not their ICRC."""
    _, records = read_pcap(pcap)
    bad = []
    for number, (_, frame) in enumerate(records, start=1):
        want = icrc(frame)
        if want is not None and struct.unpack("<I", frame[-4:])[0] != want:
            bad.append(number)
    return bad

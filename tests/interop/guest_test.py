#!/usr/bin/env python3
"""Tests of guest.py and of the cable as rig's side will see it (one ctest per case):

    guest_test.py WORKDIR status     a command's output and exit status come back; a wait for a
                                     line that never comes fails in its time with the console;
                                     the cable stays silent while nothing uses it
    guest_test.py WORKDIR udp-peer   this process is the cable's other end on a UDP socket, as
                                     rig's datagram cable will be: the guest's ARP request for
                                     10.77.0.1 arrives as one 42-byte datagram (an Ethernet frame,
                                     no FCS, no padding); our reply and ICMP echo replies reach
                                     the guest's ping; the capture holds the same bytes

Exits 77 (skipped) only where QEMU or Debian's packages cannot be had.
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from pathlib import Path

import capture
import guest
import guest_image

PEER_MAC = bytes.fromhex("020000000001")
PEER_IP = "10.77.0.1"


def fail(what: str, g: guest.Guest | None = None) -> int:
    print(f"FAILED: {what}")
    if g is not None:
        print(f"--- console of {g.name}:\n{g.tail(40)}")
    return 1


def case_status(workdir: Path, image: guest_image.Image) -> int:
    a, b = guest.free_ports(2)
    with guest.Guest(image, "echo hello from $(uname -r); exit 3", workdir=workdir,
                     cable=guest.Cable(a, b)) as g:
        boot = g.wait_ready(180)
        m = g.wait_for(r"^hello from (\S+)$", 60)
        status = g.wait_exit(60)
        if status != 3:
            return fail(f"exit status {status}, not 3", g)
        release = image.manifest.split("\n", 1)[0].removeprefix("kernel ")
        if m.group(1) != release:
            return fail(f"the guest runs kernel {m.group(1)}, the image holds {release}", g)
    with guest.Guest(image, "sleep 600", workdir=workdir, cable=guest.Cable(a, b), name="stalled") as g:
        g.wait_ready(180)
        started = time.monotonic()
        try:
            g.wait_for("^never printed$", 3)
            return fail("wait_for returned a line that was never printed", g)
        except guest.GuestError as e:
            waited = time.monotonic() - started
            if not 2.5 <= waited < 10 or "RIG-GUEST-READY" not in str(e):
                return fail(f"wait_for gave up after {waited:.1f} s with: {e}")
    header, records = capture.read_pcap(workdir / "guest.pcap")
    if records:
        return fail(f"the cable carried {len(records)} frames while nothing used it")
    print(f"status: passed; boot {boot:.1f} s")
    return 0


def arp_frame(op: int, sender_mac: bytes, sender_ip: str, target_mac: bytes, target_ip: str, dst: bytes) -> bytes:
    # RFC 826 over Ethernet II: htype 1, ptype 0x0800, hlen 6, plen 4.
    return (dst + sender_mac + b"\x08\x06" + struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + sender_mac +
            socket.inet_aton(sender_ip) + target_mac + socket.inet_aton(target_ip))


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def echo_reply(frame: bytes) -> bytes:
    """The ICMP echo reply (RFC 792) to an echo request frame, addresses swapped."""
    ihl = (frame[14] & 0x0F) * 4
    ip, icmp = bytearray(frame[14:14 + ihl]), bytearray(frame[14 + ihl:])
    ip[12:16], ip[16:20] = frame[30:34], frame[26:30]
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", checksum(bytes(ip)))
    icmp[0] = 0
    icmp[2:4] = b"\0\0"
    icmp[2:4] = struct.pack("!H", checksum(bytes(icmp)))
    return frame[6:12] + PEER_MAC + frame[12:14] + bytes(ip) + bytes(icmp)


def case_udp_peer(workdir: Path, image: guest_image.Image) -> int:
    a, b = guest.free_ports(2)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", b))
    sock.settimeout(1.0)
    address = guest.Address()
    guest_mac = bytes.fromhex(address.mac.replace(":", ""))
    with sock, guest.Guest(image, f"rig_wait_go && ping -c 2 -W 20 {PEER_IP}", workdir=workdir,
                           cable=guest.Cable(a, b), name="pinged") as g:
        g.go(180)
        sent: list[bytes] = []
        received: list[bytes] = []
        deadline = time.monotonic() + 60
        while g.exit_status is None and time.monotonic() < deadline:
            try:
                frame, source = sock.recvfrom(65536)
            except socket.timeout:
                continue
            if source != ("127.0.0.1", a):
                return fail(f"a datagram from {source}, not from the guest's end 127.0.0.1:{a}", g)
            received.append(frame)
            if frame[12:14] == b"\x08\x06":
                want = arp_frame(1, guest_mac, address.ip, b"\0" * 6, PEER_IP, b"\xff" * 6)
                if frame != want:
                    return fail(f"ARP request {frame.hex()}, not {want.hex()} (42 bytes, no FCS or pad)", g)
                reply = arp_frame(2, PEER_MAC, PEER_IP, guest_mac, address.ip, guest_mac)
            elif frame[12:14] == b"\x08\x00" and frame[23] == 1 and frame[34] == 8:
                reply = echo_reply(frame)
            else:
                return fail(f"an unexpected frame {frame[:64].hex()}", g)
            sock.sendto(reply, ("127.0.0.1", a))
            sent.append(reply)
        status = g.wait_exit(30)
        if status != 0:
            return fail(f"ping exited {status}", g)
        g.wait_for(r"^2 packets transmitted, 2 packets received", 1)  # busybox ping's summary
    header, records = capture.read_pcap(g.pcap)
    frames = [data for _, data in records]
    if frames != [x for pair in zip(received, sent) for x in pair]:
        return fail(f"the capture's {len(frames)} frames are not the {len(received)} received and {len(sent)} sent "
                    "in turn, byte for byte")
    kinds = [f.protocols for f in capture.frames(g.pcap)]
    if kinds != ["eth:ethertype:arp"] * 2 + ["eth:ethertype:ip:icmp:data"] * 4:
        return fail(f"tshark decodes the capture as {kinds}")
    print(f"udp-peer: passed; {len(received)} frames from the guest, {len(sent)} answered")
    return 0


def main(argv: list[str]) -> int:
    cases = {"status": case_status, "udp-peer": case_udp_peer}
    if len(argv) != 3 or argv[2] not in cases:
        print(__doc__, file=sys.stderr)
        return 2
    image = guest.image_or_skip()
    if image is None:
        return guest.SKIPPED
    workdir = Path(argv[1])
    workdir.mkdir(parents=True, exist_ok=True)
    return cases[argv[2]](workdir, image)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Validates the interop rig with two rxe guests talking to each other (one ctest per case):

    rxe_pair_test.py WORKDIR rc_pingpong SIZE ITERS   ibv_rc_pingpong -g 1 -s SIZE -n ITERS -m 1024
    rxe_pair_test.py WORKDIR ib_send_bw SIZE ITERS    ib_send_bw -x 1 -s SIZE -n ITERS -m 1024
    rxe_pair_test.py WORKDIR ib_read_bw SIZE ITERS    ib_read_bw -x 1 -s SIZE -n ITERS -m 1024

Both programs must exit 0 and print what their sources print for these options; then each
guest's capture must hold exactly the RoCEv2 packets these transfers make, as tshark decodes
them: ARP for the peer, and per message the opcodes, PSNs (from the printed starting PSN, one
per 1024-byte packet), destination QPs, payload lengths, AckReq bits, UDP ports, P_Keys, the
ACKs of the receiver, and for RDMA READ the rkey and addresses the server printed; nothing
else on the cable. Prints the boot and run times. Exits 77 (skipped) only where QEMU or
Debian's packages cannot be had.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import capture
import guest
import rxe_pair
from capture import Frame
from rxe_pair import CLIENT, SERVER, QueuePair

MTU = 1024
PSN_MASK = (1 << 24) - 1


class Failed(AssertionError):
    pass


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise Failed(what)


def packets_per_message(size: int) -> int:
    return max(1, -(-size // MTU))


def position(psn: int, first: int, size: int) -> tuple[int, int]:
    """(message, packet within it) of a PSN of a transfer that starts at PSN `first`."""
    offset = (psn - first) & PSN_MASK
    return divmod(offset, packets_per_message(size))


def send_opcode(index: int, count: int) -> int:
    if count == 1:
        return capture.SEND_ONLY
    return capture.SEND_FIRST if index == 0 else capture.SEND_LAST if index == count - 1 else capture.SEND_MIDDLE


def padded(n: int) -> int:
    return (n + 3) & ~3


def check_udp(frames: list[Frame], a: QueuePair, b: QueuePair, where: str, rxe_ips: set[str] | None = None) -> None:
    """UDP port 4791 and P_Key 0xFFFF on every frame; the source port rxe computes on those
    from `rxe_ips` (None: all of them; another sender may choose its own)."""
    sport = capture.rxe_udp_sport(a.qpn, b.qpn)
    for f in frames:
        expect(f.udp_dst == capture.ROCE_PORT, f"{where}: frame {f.number} to UDP port {f.udp_dst}, not 4791")
        if rxe_ips is None or f.ip_src in rxe_ips:
            expect(f.udp_src == sport, f"{where}: frame {f.number} from UDP port {f.udp_src}, rxe's for QPNs "
                   f"{a.qpn:#x}/{b.qpn:#x} is {sport}")
        expect(f.p_key == 0xFFFF, f"{where}: frame {f.number} has P_Key {f.p_key:#x}")


# rxe_req.c (init_req_packet): a request packet asks for an ACK when it ends its message or
# when more than RXE_MAX_PKT_PER_ACK (64, rxe_param.h) packets went without one:
# `ack_req = end || qp->req.noack_pkts++ > RXE_MAX_PKT_PER_ACK`, the count reset on each.
RXE_MAX_PKT_PER_ACK = 64


def rxe_ack_requests(frames: list[Frame], ends: set[int]) -> list[bool]:
    """The AckReq bit rxe gives each of a QP's request packets, in the order it sent them."""
    bits, without = [], 0
    for f in frames:
        if f.opcode in ends:
            ack = True
        else:
            ack = without > RXE_MAX_PKT_PER_ACK
            without += 1
        if ack:
            without = 0
        bits.append(ack)
    return bits


def last_packets_ask(frames: list[Frame], ends: set[int]) -> list[bool | None]:
    """The AckReq rule every RC requester keeps (IBA 9.7.3.1): a message's last packet asks for
    an ACK; any other packet may (None)."""
    return [True if f.opcode in ends else None for f in frames]


def check_sends(at_sender: list[Frame], at_receiver: list[Frame], sender: guest.Address, sender_qp: QueuePair,
                receiver: guest.Address, receiver_qp: QueuePair, messages: int, size: int, where: str,
                ack_rule=rxe_ack_requests, rxe_ips: set[str] | None = None) -> int:
    """The SENDs sender -> receiver as the sender sent them (its capture) and as they arrived
    (the receiver's), and the receiver's ACKs; the sender's AckReq bits by `ack_rule` (rxe's
    by default; None in its answer allows either). Returns how many packets were sent again."""
    count = packets_per_message(size)
    sends = [f for f in at_sender if f.ip_src == sender.ip and f.opcode != capture.ACKNOWLEDGE]
    arrived = [f for f in at_receiver if f.ip_src == sender.ip and f.opcode != capture.ACKNOWLEDGE]
    expect(sends, f"{where}: no SEND from {sender.ip}")
    for f, ack_request in zip(sends, ack_rule(sends, {capture.SEND_LAST, capture.SEND_ONLY})):
        message, index = position(f.psn, sender_qp.psn, size)
        expect(message < messages, f"{where}: frame {f.number} PSN {f.psn:#x} beyond the {messages} messages "
               f"from PSN {sender_qp.psn:#x}")
        expect(f.dest_qp == receiver_qp.qpn, f"{where}: frame {f.number} to QP {f.dest_qp:#x}, not {receiver_qp.qpn:#x}")
        expect(f.opcode == send_opcode(index, count), f"{where}: frame {f.number} PSN {f.psn:#x} (packet {index} of "
               f"{count}) has opcode {f.opcode:#x}, not {send_opcode(index, count):#x}")
        length = min(MTU, size - index * MTU)
        expect(f.payload == padded(length) and f.pad == padded(length) - length,
               f"{where}: frame {f.number} carries {f.payload} bytes with pad {f.pad}, not {length} + pad")
        expect(ack_request is None or f.ack_request == ack_request, f"{where}: frame {f.number} (packet {index} of "
               f"{count}) AckReq {f.ack_request}, the sender's rule gives {ack_request}")
        expect(f.eth_src == sender.mac and f.eth_dst == receiver.mac and f.ip_dst == receiver.ip,
               f"{where}: frame {f.number} {f.eth_src} {f.ip_src} -> {f.eth_dst} {f.ip_dst}")
    want = {(sender_qp.psn + i) & PSN_MASK for i in range(messages * count)}
    for frames, side in ((sends, "sent"), (arrived, "arrived")):
        psns = {f.psn for f in frames}
        expect(psns == want, f"{where}: of the {len(want)} PSNs from {sender_qp.psn:#x}, {len(want - psns)} never "
               f"{side}, {len(psns - want)} others {side}")
    acks = [f for f in at_receiver if f.ip_src == receiver.ip and f.opcode == capture.ACKNOWLEDGE]
    for f in acks:
        expect(f.dest_qp == sender_qp.qpn and f.syndrome in (capture.SYNDROME_ACK, capture.SYNDROME_NAK_PSN_SEQUENCE),
               f"{where}: ACK frame {f.number} to QP {f.dest_qp:#x} has syndrome {f.syndrome:#x}")
    # Every message completed, so each LAST/ONLY arrived in order once and was ACKed at once.
    acked = {f.psn for f in acks if f.syndrome == capture.SYNDROME_ACK}
    ends = {f.psn for f in arrived if f.opcode in (capture.SEND_LAST, capture.SEND_ONLY)}
    expect(ends <= acked, f"{where}: {len(ends - acked)} messages' last PSNs without an ACK of that PSN from {receiver.ip}")
    check_udp(sends + acks, sender_qp, receiver_qp, where, rxe_ips)
    return len(sends) - len(want)


def check_reads(at_client: list[Frame], at_server: list[Frame], server_qp: QueuePair, client_qp: QueuePair,
                messages: int, size: int, where: str, client: guest.Address = CLIENT, server: guest.Address = SERVER,
                rxe_ips: set[str] | None = None) -> int:
    """The client's RDMA READ requests as it sent them and the server's responses as the server
    sent them. Returns how many requests resume a read part way (a retry after a loss)."""
    count = packets_per_message(size)
    requests = [f for f in at_client if f.ip_src == client.ip]
    responses = [f for f in at_server if f.ip_src == server.ip]
    expect(requests and responses, f"{where}: {len(requests)} requests, {len(responses)} responses")
    resumed = 0
    for f in requests:
        expect(f.opcode == capture.READ_REQUEST, f"{where}: the client sent opcode {f.opcode:#x} (frame {f.number})")
        message, index = position(f.psn, client_qp.psn, size)
        expect(message < messages, f"{where}: read request frame {f.number} PSN {f.psn:#x} beyond the transfer")
        # A read resumed from packet `index` asks for the rest of the message from there.
        expect(f.rkey == server_qp.rkey and f.va == server_qp.va + index * MTU and f.dma_length == size - index * MTU,
               f"{where}: read request frame {f.number} (PSN {f.psn:#x}, packet {index}) asks rkey {f.rkey:#x} "
               f"va {f.va:#x} length {f.dma_length}; the server registered rkey {server_qp.rkey:#x} at {server_qp.va:#x}")
        expect(f.dest_qp == server_qp.qpn and f.ack_request, f"{where}: read request frame {f.number} QP/AckReq")
        resumed += index != 0
    first_requests = {f.psn for f in requests if position(f.psn, client_qp.psn, size)[1] == 0}
    expect(first_requests == {(client_qp.psn + i * count) & PSN_MASK for i in range(messages)},
           f"{where}: {len(first_requests)} distinct read requests, not {messages}")
    for f in responses:
        message, index = position(f.psn, client_qp.psn, size)
        expect(message < messages and f.dest_qp == client_qp.qpn, f"{where}: response frame {f.number} PSN/QP")
        last = index == count - 1
        allowed = {capture.READ_RESPONSE_ONLY} if count == 1 else \
            {capture.READ_RESPONSE_LAST, capture.READ_RESPONSE_ONLY} if last else \
            {capture.READ_RESPONSE_FIRST, capture.READ_RESPONSE_MIDDLE}
        expect(f.opcode in allowed, f"{where}: response frame {f.number} (packet {index} of {count}) opcode {f.opcode:#x}")
        expect(f.payload == min(MTU, size - index * MTU), f"{where}: response frame {f.number} carries {f.payload} bytes")
        if f.opcode != capture.READ_RESPONSE_MIDDLE:
            expect(f.syndrome == capture.SYNDROME_ACK, f"{where}: response frame {f.number} AETH {f.syndrome}")
    covered = {f.psn for f in responses}
    expect(covered == {(client_qp.psn + i) & PSN_MASK for i in range(messages * count)},
           f"{where}: responses cover {len(covered)} PSNs, not {messages * count}")
    check_udp(requests + responses, client_qp, server_qp, where, rxe_ips)
    return resumed


def check_cable(everything: list[Frame], local: guest.Address, peer: guest.Address, where: str) -> None:
    """The cable carried the ARP between the two and RoCEv2, nothing else."""
    arp = [f for f in everything if f.protocols == "eth:ethertype:arp"]
    others = [f for f in everything if f.opcode is None and f not in arp]
    expect(not others, f"{where}: {len(others)} frames neither ARP nor RoCEv2 on the cable, the first "
           f"{others[0].number if others else 0}: {others[0].protocols if others else ''}")
    # One side asks (rxe resolves the peer when its QP moves to RTR); the other learns the
    # asker's address from the request and need not ask.
    asked = [(f.arp_sender, f.arp_target) for f in arp if f.arp_opcode == 1 and
             {f.arp_sender, f.arp_target} == {local.ip, peer.ip}]
    expect(bool(asked), f"{where}: no ARP request between {local.ip} and {peer.ip}")
    expect(any(f.arp_opcode == 2 and (f.arp_sender, f.arp_target) == (b, a) for f in arp for a, b in asked),
           f"{where}: no ARP reply to the request")


def main(argv: list[str]) -> int:
    if len(argv) != 5 or argv[2] not in ("rc_pingpong", "ib_send_bw", "ib_read_bw"):
        print(__doc__, file=sys.stderr)
        return 2
    workdir, program, size, iters = Path(argv[1]), argv[2], int(argv[3]), int(argv[4])
    image = guest.image_or_skip()
    if image is None:
        return guest.SKIPPED
    if program == "rc_pingpong":
        options = f"-g 1 -s {size} -n {iters} -m 1024"
        server_cmd, client_cmd = f"ibv_rc_pingpong {options}", f"ibv_rc_pingpong {options} -p $PORT $SERVER"
    else:
        options = f"-x 1 -s {size} -n {iters} -m 1024"
        server_cmd, client_cmd = f"{program} {options}", f"{program} {options} -p $PORT $SERVER"
    # Generous bounds for a loaded 2-core machine; the runs take 10-30 s (docs/interop.md).
    where = f"{program} -s {size} -n {iters}"
    pair = rxe_pair.run_pair(workdir, server_cmd, client_cmd, timeout=240 + size * iters / 1e5, image=image)
    if any(rxe_pair.clock_unmeasured(g.console) for g in (pair.server, pair.client)):
        print(f"{where}: perftest could not measure a guest's clock (rxe_pair.CLOCK_UNMEASURED); once more")
        pair = rxe_pair.run_pair(workdir, server_cmd, client_cmd, timeout=240 + size * iters / 1e5, image=image)
    try:
        expect(pair.server_status == 0 and pair.client_status == 0,
               f"{where}: exit status server {pair.server_status}, client {pair.client_status}")
        resent = 0
        everything_server, everything_client = capture.frames(pair.server.pcap), capture.frames(pair.client.pcap)
        if program == "rc_pingpong":
            server_qp, client_qp = (rxe_pair.rc_pingpong_local(g.console) for g in (pair.server, pair.client))
            for g in (pair.server, pair.client):
                # rc_pingpong.c counts each ping and pong: 2 * size * iters bytes
                expect(re.search(rf"^{2 * size * iters} bytes in [0-9.]+ seconds = ", g.console, re.M) is not None,
                       f"{where}: {g.name} did not report {2 * size * iters} bytes")
                expect(re.search(rf"^{iters} iters in [0-9.]+ seconds = ", g.console, re.M) is not None,
                       f"{where}: {g.name} did not report {iters} iters")
            at_server, at_client = capture.roce(everything_server), capture.roce(everything_client)
            resent += check_sends(at_client, at_server, CLIENT, client_qp, SERVER, server_qp, iters, size, "pings")
            resent += check_sends(at_server, at_client, SERVER, server_qp, CLIENT, client_qp, iters, size, "pongs")
        else:
            server_qp, client_qp = (rxe_pair.perftest_local(g.console) for g in (pair.server, pair.client))
            for g in (pair.server, pair.client):
                expect(re.search(rf"^ {size}\s+{iters}\s+[0-9.]+\s+[0-9.]+", g.console, re.M) is not None,
                       f"{where}: {g.name} printed no result row for {size} bytes x {iters}")
            at_server, at_client = capture.roce(everything_server), capture.roce(everything_client)
            if program == "ib_send_bw":
                resent += check_sends(at_client, at_server, CLIENT, client_qp, SERVER, server_qp, iters, size, "sends")
                expect(all(f.opcode == capture.ACKNOWLEDGE for f in at_server if f.ip_src == SERVER.ip),
                       f"{where}: the server sent more than ACKs")
            else:
                expect(server_qp.rkey is not None, f"{where}: ib_read_bw printed no RKey")
                resent += check_reads(at_client, at_server, server_qp, client_qp, iters, size, "reads")
        check_cable(everything_server, SERVER, CLIENT, "server's capture")
        check_cable(everything_client, CLIENT, SERVER, "client's capture")
    except Failed as e:
        print(f"FAILED: {e}\n--- server console:\n{pair.server.tail(60)}\n--- client console:\n{pair.client.tail(60)}\n"
              f"--- last frames of the server's capture {pair.server.pcap}:\n{capture.summary(pair.server.pcap)}")
        return 1
    print(f"{where}: passed; {len(at_server)} RoCE frames at the server, {len(at_client)} at the client, "
          f"{resent} resent or resumed")
    print(f"timing: boot {pair.boot_s:.1f} s (server {pair.server.ready_at:.1f}, client {pair.client.ready_at:.1f}), "
          f"run {pair.run_s:.1f} s, total {pair.total_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

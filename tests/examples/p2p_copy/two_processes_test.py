"""p2p_copy as two processes on 127.0.0.1 (README.md, "Across processes and hosts"): the
receiver (--listen 127.0.0.1:0, the port it prints) and the sender (--connect), run as a
user runs them, one case per invocation:

  two_processes_test.py P2P_COPY CASE

Cases that complete: push and pull (--pull) over both paths, each side's --json object
checked field by field against the other's and against the in-process object's shape;
the cable's ports given with --cable and a capture written with --pcap; jobs that differ.

Cases of a peer that is not p2p_copy (peer-...): the test speaks rig's bootstrap protocol
itself and sends what a p2p_copy would not (another protocol, the same role, a region too
small to read, a count that goes back, a message out of order); p2p_copy ends with status
1 and an error naming the peer and what was wrong, tells the peer (an "error" message)
where the connection still stands, and closes it.

Cases that kill (kill-<victim>-<point>-<mode>): the sender or the receiver is killed
(SIGKILL) by a relay between them (relay.py) at a point of the exchange: at a message of
the setup (hello, queue_pair, path), mid-transfer (after a number of datagrams towards the
receiver) or before the result (its outcome held back). The survivor must end by itself
within twice its queue pairs' retry budget and a second (and a little for the machine),
with exit status 1 (not a signal, not std::terminate: its threads were joined) and a
message that names its peer as it sees it; a survivor that had work in flight on its
queue pair (the sender of a push, the receiver of a pull) also the completion's status or
the connection's close, whichever ended it.
"""
from __future__ import annotations

import json
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import TO_RECEIVER, TO_SENDER, Relay, Trigger  # noqa: E402

BUDGET = 0.537  # s: ACK timeout 67.1 ms x 8 tries, what p2p_copy prints
PATIENCE = 2 * BUDGET + 1 + 4  # s: session.hpp's grace, and room for a loaded machine
LISTENS = re.compile(r"listens on 127\.0\.0\.1:(\d+)")


class Failed(Exception):
    pass


def check(condition: bool, what: str, *context: str) -> None:
    if not condition:
        raise Failed(what + "".join("\n--- " + c for c in context))


class Process:
    """One p2p_copy process; its output is read when it ends."""

    def __init__(self, binary: str, args: list[str], name: str):
        self.name = name
        self.args = args
        self.popen = subprocess.Popen([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out = self.err = ""
        self.status: int | None = None
        self.ended_at: float | None = None

    def kill(self) -> None:
        self.popen.send_signal(signal.SIGKILL)

    def wait(self, timeout: float) -> int:
        try:
            self.out, self.err = self.popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.out, self.err = self.popen.communicate()
            raise Failed(f"{self.name} did not end within {timeout} s (killed): {self.err}")
        self.ended_at = time.monotonic()
        self.status = self.popen.returncode
        return self.status

    def describe(self) -> str:
        return f"{self.name} {' '.join(self.args)}: status {self.status}\nstdout: {self.out}\nstderr: {self.err}"


def start_receiver(binary: str, args: list[str]) -> tuple[Process, int]:
    """The receiver, and the port it listens on (the first line it prints on stderr)."""
    p = Process(binary, ["--listen", "127.0.0.1:0", *args], "receiver")
    line = p.popen.stderr.readline()
    m = LISTENS.search(line)
    if not m:
        p.kill()
        p.wait(10)
        raise Failed(f"the receiver printed no port: {line!r}\n{p.describe()}")
    p.err_head = line
    return p, int(m.group(1))


def finish(p: Process, timeout: float) -> int:
    status = p.wait(timeout)
    p.err = getattr(p, "err_head", "") + p.err
    return status


def pair(binary: str, receiver_args: list[str], sender_args: list[str], timeout: float = 120) -> tuple[Process, Process]:
    receiver, port = start_receiver(binary, receiver_args)
    sender = Process(binary, ["--connect", f"127.0.0.1:{port}", *sender_args], "sender")
    finish(sender, timeout)
    finish(receiver, timeout)
    return sender, receiver


KEYS = ["topology", "size", "path_mtu", "paths"]
PATH_KEYS = ["path", "ran", "reason", "bytes", "seconds", "bytes_per_second", "ceiling_bytes_per_second", "impossible",
             "verified"]


def json_of(p: Process) -> dict:
    try:
        return json.loads(p.out)
    except json.JSONDecodeError as e:
        raise Failed(f"{p.name}: not one JSON object ({e})\n{p.describe()}")


def check_verified(obj: dict, names: list[str], size: int, who: Process) -> None:
    check(list(obj) == KEYS, f"{who.name}: keys {list(obj)}", who.describe())
    check(obj["topology"] == "switch" and obj["size"] == size, f"{who.name}: {obj['topology']} {obj['size']}")
    check([p["path"] for p in obj["paths"]] == names, f"{who.name}: paths {[p['path'] for p in obj['paths']]}")
    for p in obj["paths"]:
        check(list(p) == PATH_KEYS, f"{who.name}: path keys {list(p)}")
        check(p["ran"] is True and p["verified"] is True, f"{who.name}: {p['path']} not verified: {p['reason']}", who.describe())
        check(p["bytes"] == size, f"{who.name}: {p['path']} bytes {p['bytes']}")
        check(p["seconds"] > 0 and abs(p["bytes_per_second"] - size / p["seconds"]) <= 1e-6 * size / p["seconds"],
              f"{who.name}: {p['path']} {p['seconds']} s, {p['bytes_per_second']} B/s")


def completes(binary: str, pull: bool) -> None:
    size = 4 << 20
    args = ["--size", "4M", "--chunk", "256K", "--json"] + (["--pull"] if pull else [])
    sender, receiver = pair(binary, args, args)
    check(sender.status == 0 and receiver.status == 0, "both end 0", sender.describe(), receiver.describe())
    s, r = json_of(sender), json_of(receiver)
    check_verified(s, ["p2p", "bounce"], size, sender)
    check_verified(r, ["p2p", "bounce"], size, receiver)
    for a, b in zip(s["paths"], r["paths"]):
        check(a["reason"] == b["reason"], f"the two sides give the same reason: {a['reason']!r} / {b['reason']!r}")
    how = "machine 2 reads machine 1's GPU region (RDMA READ)" if pull else "machine 1 sends from its GPU region into receives in machine 2's"
    check(s["paths"][0]["reason"].startswith(how + "; machine 1: distance switch, forwards"), s["paths"][0]["reason"])
    # The in-process object has the same shape.
    one = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
    check(one.returncode == 0, "in-process run", one.stdout, one.stderr)
    check_verified(json.loads(one.stdout), ["p2p", "bounce"], size, sender)
    # Each side's table names it and its peer, and the retry budget.
    for p, role in ((sender, "machine 1, the sender"), (receiver, "machine 2, the receiver")):
        check(f"p2p_copy: {role}, connected with 127.0.0.1:" in p.err, f"{p.name} says who it is", p.describe())


def mtu(binary: str) -> None:
    """--mtu on one side only: each side's endpoint says its capped MTU, so both queue
    pairs use the smaller (1024, below the ports' 4096), both report it, and both paths
    verify; without --mtu on either side, the ports' 4096."""
    size = 1 << 20
    args = ["--size", "1M", "--json"]
    sender, receiver = pair(binary, args + ["--mtu", "1024"], args)
    check(sender.status == 0 and receiver.status == 0, "both end 0", sender.describe(), receiver.describe())
    for p in (sender, receiver):
        obj = json_of(p)
        check_verified(obj, ["p2p", "bounce"], size, p)
        check(obj["path_mtu"] == 1024, f"{p.name}: path_mtu {obj['path_mtu']}", p.describe())
    sender, receiver = pair(binary, args, args)
    for p in (sender, receiver):
        check(json_of(p)["path_mtu"] == 4096, f"{p.name}: path_mtu {json_of(p)['path_mtu']}", p.describe())


def udp_port_taken(binary: str) -> None:
    """Without --cable a side's cable takes its TCP port's number for UDP; where another
    socket holds that UDP port, the kernel chooses the cable's port and the run completes
    (the Hello tells the peer which port it is)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        args = ["--size", "1M", "--path", "p2p", "--json"]
        receiver = Process(binary, ["--listen", f"127.0.0.1:{port}", *args], "receiver")
        receiver.err_head = receiver.popen.stderr.readline()
        m = LISTENS.search(receiver.err_head)
        check(m is not None and int(m.group(1)) == port, f"the receiver listens on TCP {port}", receiver.err_head)
        sender = Process(binary, ["--connect", f"127.0.0.1:{port}", *args], "sender")
        finish(sender, 120)
        finish(receiver, 120)
        check(sender.status == 0 and receiver.status == 0, "both end 0", sender.describe(), receiver.describe())
        check_verified(json_of(sender), ["p2p"], 1 << 20, sender)
        check_verified(json_of(receiver), ["p2p"], 1 << 20, receiver)


def cable_and_capture(binary: str) -> None:
    """--cable LOCAL_PORT on each side and --pcap on the receiver: the capture holds the
    frames of both directions between those UDP ports' cables."""
    ports = []
    for _ in range(2):  # two UDP ports free now
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.bind(("127.0.0.1", 0))
            ports.append(u.getsockname()[1])
    with tempfile.TemporaryDirectory() as tmp:
        pcap = Path(tmp) / "receiver.pcap"
        args = ["--size", "1M", "--path", "p2p"]
        sender, receiver = pair(binary, args + ["--cable", str(ports[0]), "--pcap", str(pcap)],
                                args + ["--cable", str(ports[1])])
        check(sender.status == 0 and receiver.status == 0, "both end 0", sender.describe(), receiver.describe())
        retries = "(queue pairs retry: ACK timeout 67.1 ms x 8 tries (1 + retry_cnt 7) = 537 ms)"
        for p, who in ((sender, "machine 1, the sender"), (receiver, "machine 2, the receiver")):
            check(re.search(r"^this process: " + re.escape(who) + r", with 127\.0\.0\.1:\d+ " + re.escape(retries) + "$",
                            p.out, re.M), f"{p.name}'s table names it, its peer and the retry budget", p.describe())
        data = pcap.read_bytes()
        check(len(data) > 24 and struct.unpack_from("<I", data)[0] in (0xA1B2C3D4, 0xA1B23C4D), "a pcap file")
        at, sent = 24, {}  # bytes of frames by source MAC
        while at + 16 <= len(data):
            caplen = struct.unpack_from("<I", data, at + 8)[0]
            frame = data[at + 16:at + 16 + caplen]
            source = frame[6:12].hex(":")
            sent[source] = sent.get(source, 0) + len(frame)
            at += 16 + caplen
        check(set(sent) == {"02:00:00:00:00:01", "02:00:00:00:00:02"}, f"frames from both ports: {sent}")
        check(sent["02:00:00:00:00:01"] > 1 << 20, f"the sender's frames hold the 1 MiB: {sent}")


def jobs_differ(binary: str) -> None:
    sender, receiver = pair(binary, ["--size", "2M"], ["--size", "2M", "--pull", "--depth", "1"])
    check(sender.status == 1 and receiver.status == 1, "both end 1", sender.describe(), receiver.describe())
    d = "depth 2 here, 1 there; mode send here, read there"  # depth 16 fitted to the 2 chunks of 1 MiB
    check(re.search(r"p2p_copy: 127\.0\.0\.1:\d+: its job differs from this receiver's \(" + re.escape(d) + r"\)", receiver.err),
          "the receiver names the differences", receiver.describe())
    check(re.search(r"p2p_copy: 127\.0\.0\.1:\d+: gave up: 127\.0\.0\.1:\d+: its job differs", sender.err),
          "the sender quotes the receiver", sender.describe())


# -- peers that are not p2p_copy --

def frame(message: dict) -> bytes:
    payload = json.dumps(message).encode()
    return struct.pack(">4sII", b"RIGB", 1, len(payload)) + payload


def receive(connection: socket.socket) -> dict | None:
    """The next message, or None where the connection closed."""
    def exactly(n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            try:
                piece = connection.recv(n - len(data))
            except ConnectionResetError:  # closed with our bytes unread
                return None
            if not piece:
                return None
            data += piece
        return data
    header = exactly(12)
    if header is None:
        return None
    magic, version, length = struct.unpack(">4sII", header)
    check(magic == b"RIGB" and version == 1, f"a frame of rig's protocol: {header!r}")
    return json.loads(exactly(length))


JOB = {"size": 4 << 20, "chunk": 1 << 20, "depth": 4, "mode": "read", "choice": "p2p"}
JOB_ARGS = ["--size", "4M", "--path", "p2p", "--pull"]
QUEUE_PAIR = {"type": "queue_pair", "qpn": 0x123, "psn": 0x10, "gid": "::ffff:192.0.2.9", "mac": "02:00:00:00:00:09", "mtu": 4096,
              "max_qp_rd_atom": 16, "max_qp_init_rd_atom": 16}


def against_receiver(binary: str, script) -> tuple[Process, str, list[dict]]:
    """p2p_copy --listen, and the test as its sender running `script(connection)`: the
    receiver's end, the test's address as the receiver names it, what else it sent."""
    receiver, port = start_receiver(binary, JOB_ARGS)
    connection = socket.create_connection(("127.0.0.1", port), timeout=30)
    me = "127.0.0.1:%d" % connection.getsockname()[1]
    script(connection)
    rest = []
    while (m := receive(connection)) is not None:
        rest.append(m)
    connection.close()
    finish(receiver, 60)
    return receiver, me, rest


def against_sender(binary: str, script) -> tuple[Process, str, list[dict]]:
    """p2p_copy --connect to the test as its receiver, running `script(connection)`."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    me = "127.0.0.1:%d" % listener.getsockname()[1]
    sender = Process(binary, ["--connect", me, *JOB_ARGS], "sender")
    listener.settimeout(30)
    connection, _ = listener.accept()
    connection.settimeout(30)
    script(connection)
    rest = []
    while (m := receive(connection)) is not None:
        rest.append(m)
    connection.close()
    listener.close()
    finish(sender, 60)
    return sender, me, rest


def expect_error(p: Process, line: str, rest: list[dict], told: bool = True) -> None:
    last = p.err.strip().splitlines()[-1]
    check(p.status == 1, f"{p.name} ends with status 1", p.describe())
    check(last == "p2p_copy: " + line, f"{p.name}'s error:\n  {last}\nnot\n  p2p_copy: {line}", p.describe())
    if told:
        check([m.get("type") for m in rest] == ["error"] and rest[0]["message"] == line,
              f"the peer is told once, then the connection closes: {rest}")
    else:
        check(rest == [], f"nothing more, then the connection closes: {rest}")


def peer(binary: str, case: str) -> None:
    if case == "not-rig":
        receiver, me, rest = against_receiver(binary, lambda c: c.sendall(b"GET / HTTP/1.1\r\n\r\n"))
        expect_error(receiver, f'{me}: does not speak rig\'s bootstrap protocol: a message starts with 0x47455420, '
                               f'not 0x52494742 ("RIGB")', rest, told=False)
    elif case == "same-role":
        def as_sender_too(c: socket.socket) -> None:
            hello = receive(c)
            check(hello["type"] == "hello" and hello["role"] == "sender" and hello["job"] == JOB, f"the sender's hello: {hello}")
            c.sendall(frame({"type": "hello", "role": "sender", "job": JOB}))
        sender, me, rest = against_sender(binary, as_sender_too)
        expect_error(sender, f"{me}: is a sender too, where one side must listen (--listen, the receiver) and the other "
                             f"connect (--connect, the sender)", rest)
    elif case == "small-region":
        def offer_too_little(c: socket.socket) -> None:
            c.sendall(frame({"type": "hello", "role": "sender", "job": JOB, "cable_port": 9}))
            check(receive(c)["role"] == "receiver", "the receiver's hello")
            c.sendall(frame(QUEUE_PAIR))
            check(receive(c)["type"] == "queue_pair", "the receiver's queue pair")
            c.sendall(frame({"type": "path", "path": "p2p", "opened": True, "reason": "machine 1: test",
                             "regions": [{"address": 0x10000, "rkey": 7, "bytes": 4096}]}))
            answer = receive(c)
            check(answer["type"] == "path" and answer["opened"] is True and answer["regions"] == [], f"its path: {answer}")
        receiver, me, rest = against_receiver(binary, offer_too_little)
        expect_error(receiver, f"{me}: offered 1 region(s) of 4096 bytes to read the p2p path from, where one of "
                               f"4194304 bytes is needed", rest)
    elif case in ("count-goes-back", "out-of-order"):
        def as_receiver(c: socket.socket) -> None:
            check(receive(c)["type"] == "hello", "the sender's hello")
            c.sendall(frame({"type": "hello", "role": "receiver", "job": JOB, "cable_port": 9}))
            check(receive(c)["type"] == "queue_pair", "the sender's queue pair")
            c.sendall(frame(QUEUE_PAIR))
            offer = receive(c)
            check(offer["type"] == "path" and len(offer["regions"]) == 1 and offer["regions"][0]["bytes"] == 4 << 20,
                  f"the sender offers its GPU region: {offer}")
            c.sendall(frame({"type": "path", "path": "p2p", "opened": True, "reason": "machine 2: test", "regions": []}))
            if case == "count-goes-back":
                c.sendall(frame({"type": "consumed", "path": "p2p", "chunks": 2}))
                c.sendall(frame({"type": "consumed", "path": "p2p", "chunks": 1}))
            else:
                c.sendall(frame({"type": "ready", "path": "p2p"}))
        sender, me, rest = against_sender(binary, as_receiver)
        if case == "count-goes-back":
            expect_error(sender, f'{me}: sent "consumed" of 1 chunks after 2, where 2 to 4 may come', rest)
        else:
            expect_error(sender, f'{me}: sent "ready" during the p2p transfer, out of the order of rig\'s bootstrap protocol',
                         rest)
    else:
        raise Failed(f"no peer case {case}")


# -- kills --

# point: (direction, type, count) of the relay's trigger.
POINTS = {
    "hello": (TO_SENDER, "hello", 1),            # the receiver's answer held back
    "queue_pair": (TO_RECEIVER, "queue_pair", 1),
    "path": (TO_SENDER, "path", 1),              # the receiver's answer to the first path
    "transfer": (TO_RECEIVER, "datagram", 300),  # mid-transfer: 300 of the 1024 frames (4 KiB MTU) towards the receiver
    "outcome": None,                              # the victim's outcome held back (set per victim)
}


def kill(binary: str, victim: str, point: str, mode: str) -> None:
    pull = mode.startswith("pull")
    path = mode.split("-")[1]  # p2p, bounce
    args = ["--size", "4M", "--chunk", "256K", "--path", path] + (["--pull"] if pull else [])
    receiver, port = start_receiver(binary, args)
    processes: dict[str, Process] = {"receiver": receiver}
    if point == "outcome":
        where = (TO_SENDER, "outcome", 1) if victim == "receiver" else (TO_RECEIVER, "outcome", 1)
    else:
        where = POINTS[point]
    trigger = Trigger(*where, action=lambda: processes[victim].kill(),
                      silenced=TO_RECEIVER if victim == "sender" else TO_SENDER)
    relay = Relay(port, [trigger])
    sender = Process(binary, ["--connect", f"127.0.0.1:{relay.port}", *args], "sender")
    processes["sender"] = sender
    survivor = receiver if victim == "sender" else sender
    killed = processes[victim]
    try:
        finish(survivor, 120)
    finally:
        for p in processes.values():
            if p.status is None:
                p.kill()
                finish(p, 30)
    finish(killed, 30) if killed.status is None else None
    relay.join(10)
    context = (survivor.describe(), killed.describe(), f"relay: {relay.messages} error {relay.error}")
    check(trigger.fired_at is not None, f"the trigger {where} fired", *context)
    check(killed.status == -signal.SIGKILL, f"the {victim} was killed", *context)
    check(survivor.status == 1, f"the {survivor.name} ends with status 1", *context)
    took = survivor.ended_at - trigger.fired_at
    check(took <= PATIENCE, f"the {survivor.name} ended {took:.2f} s after the kill (at most {PATIENCE:.2f})", *context)
    # Its peer as it sees it: the relay's address (the sender) or the relay's end towards it (the receiver).
    peer = f"127.0.0.1:{relay.port}" if survivor is sender else f"127.0.0.1:{relay.receiver_side_port}"
    last = survivor.err.strip().splitlines()[-1]
    check(last.startswith("p2p_copy: ") and peer in last, f"the {survivor.name}'s last line names its peer {peer}", *context)
    check("terminate called" not in survivor.err and "Sanitizer" not in survivor.err, "no abort", *context)
    requester = (survivor is sender) != pull
    if point == "transfer" and requester:
        check("TRANSPORT_RETRY_CNT_ERR" in last or "closed the connection" in last,
              "the requester names the completion's status or the close", *context)
        which = "completion" if "TRANSPORT_RETRY_CNT_ERR" in last else "close"
        print(f"the {survivor.name} ended {took:.2f} s after the kill, by the {which}: {last}")
    else:
        check("closed the connection" in last, f"the {survivor.name} names the close", *context)
        print(f"the {survivor.name} ended {took:.2f} s after the kill: {last}")


def main() -> int:
    binary, case = sys.argv[1], sys.argv[2]
    try:
        if case == "push":
            completes(binary, pull=False)
        elif case == "pull":
            completes(binary, pull=True)
        elif case == "mtu":
            mtu(binary)
        elif case == "cable-and-capture":
            cable_and_capture(binary)
        elif case == "udp-port-taken":
            udp_port_taken(binary)
        elif case == "jobs-differ":
            jobs_differ(binary)
        elif case.startswith("peer-"):
            peer(binary, case[len("peer-"):])
        elif case.startswith("kill-"):
            _, victim, point, *mode = case.split("-")
            kill(binary, victim, point, "-".join(mode))
        else:
            print(f"no case {case}")
            return 2
    except Failed as e:
        print(f"FAILED: {e}")
        return 1
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

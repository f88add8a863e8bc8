"""A relay between p2p_copy's two processes, for the tests that stop one of them at a
chosen point (two_processes_test.py).

The sender connects to the relay instead of the receiver; the relay connects to the
receiver and passes the TCP connection on message by message (rig's bootstrap framing,
bootstrap/include/rig/bootstrap/peer.hpp: "RIGB", version 1 and the payload's length,
big-endian, then one JSON object), and the two datagram cables' traffic datagram by
datagram. It rewrites one field: each Hello's "cable_port" becomes the relay's own UDP
port facing the Hello's recipient, so that each cable sends to the relay and takes the
relay's datagrams, as it takes only its peer's.

A Trigger fires once, before the relay passes on the message or the datagram that meets
it: the message is held back (its recipient never sees it) and the trigger's action runs,
a kill of one process (its `silenced` side). From then on nothing more of that side's is
passed on, as nothing more would have left it, even what it sent before the kill landed;
where one side closes its connection (as the kernel closes a killed process's), the
relay closes the other's. Its UDP sockets ask for 32 MiB of receive buffer, as the
datagram cable's do, so that it drops no frame on a machine that lets it.
"""
from __future__ import annotations

import json
import selectors
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

HEADER = struct.Struct(">4sII")  # magic, version, payload length
TO_RECEIVER, TO_SENDER = "to receiver", "to sender"


@dataclass
class Trigger:
    """Fires at the `count`-th message of `type` going `direction` (type "datagram": the
    count-th datagram that way)."""
    direction: str
    type: str
    count: int
    action: Callable[[], None]
    silenced: str  # the direction of what the killed side sends: TO_RECEIVER for the sender
    fired_at: float | None = None


@dataclass
class Relay:
    receiver_port: int  # TCP, on 127.0.0.1
    triggers: list[Trigger] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        # UDP: one socket faces the sender's cable, one the receiver's.
        self.udp = {}
        for side in (TO_SENDER, TO_RECEIVER):
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.bind(("127.0.0.1", 0))
            u.setblocking(False)
            for option in (getattr(socket, "SO_RCVBUFFORCE", 33), socket.SO_RCVBUF):
                try:
                    u.setsockopt(socket.SOL_SOCKET, option, 32 << 20)
                    break
                except OSError:
                    continue
            self.udp[side] = u
        self.cable = {}  # the cables' own UDP ports, from the Hellos: TO_SENDER: the sender's
        self.counts: dict[tuple[str, str], int] = {}
        self.silenced: set[str] = set()  # directions nothing passes in any more
        self.messages: list[tuple[str, str]] = []  # (direction, type) passed on, in order
        self.receiver_side_port = 0  # the relay's port of its connection to the receiver
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)

    # -- internals --

    def _fire(self, direction: str, type_: str) -> bool:
        key = (direction, type_)
        self.counts[key] = self.counts.get(key, 0) + 1
        for t in self.triggers:
            if t.fired_at is None and t.direction == direction and t.type == type_ and t.count == self.counts[key]:
                t.fired_at = time.monotonic()
                self.silenced.add(t.silenced)
                t.action()
                return True
        return direction in self.silenced

    def _rewrite(self, payload: bytes, direction: str) -> bytes:
        message = json.loads(payload)
        if message.get("type") == "hello":
            sender_side = TO_SENDER if direction == TO_RECEIVER else TO_RECEIVER  # whose Hello it is
            self.cable[sender_side] = message["cable_port"]
            message["cable_port"] = self.udp[direction].getsockname()[1]
            return json.dumps(message).encode()
        return payload

    def _run(self) -> None:
        try:
            self._relay()
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.error = repr(e)

    def _relay(self) -> None:
        self.listener.settimeout(60)
        sender, _ = self.listener.accept()
        receiver = socket.create_connection(("127.0.0.1", self.receiver_port), timeout=10)
        self.receiver_side_port = receiver.getsockname()[1]
        streams = {TO_RECEIVER: (sender, receiver), TO_SENDER: (receiver, sender)}  # direction: (from, to)
        buffers = {TO_RECEIVER: b"", TO_SENDER: b""}
        selector = selectors.DefaultSelector()
        for direction, (source, _) in streams.items():
            source.setblocking(True)
            selector.register(source, selectors.EVENT_READ, ("tcp", direction))
        for direction, u in self.udp.items():
            # The socket facing the sender receives what goes to the receiver, and so on.
            selector.register(u, selectors.EVENT_READ, ("udp", TO_RECEIVER if direction == TO_SENDER else TO_SENDER))
        open_streams = 2
        while open_streams > 0:
            for key, _ in selector.select(timeout=30):
                kind, direction = key.data
                if kind == "udp":
                    self._datagrams(key.fileobj, direction)
                    continue
                source, target = streams[direction]
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                if not data:  # closed (or reset): close the other end too, as a killed process's would be
                    selector.unregister(source)
                    open_streams -= 1
                    try:
                        target.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    continue
                buffers[direction] += data
                buffers[direction] = self._frames(buffers[direction], direction, target)
        sender.close()
        receiver.close()

    def _frames(self, buffer: bytes, direction: str, target: socket.socket) -> bytes:
        while len(buffer) >= HEADER.size:
            magic, version, length = HEADER.unpack_from(buffer)
            if len(buffer) < HEADER.size + length:
                break
            payload = buffer[HEADER.size:HEADER.size + length]
            buffer = buffer[HEADER.size + length:]
            type_ = json.loads(payload).get("type", "?")
            if self._fire(direction, type_):
                continue  # held back
            payload = self._rewrite(payload, direction)
            self.messages.append((direction, type_))
            try:
                target.sendall(HEADER.pack(magic, version, len(payload)) + payload)
            except OSError:
                pass
        return buffer

    def _datagrams(self, u: socket.socket, direction: str) -> None:
        out = self.udp[direction]
        for _ in range(64):
            try:
                data = u.recv(65536)
            except (BlockingIOError, OSError):
                return
            port = self.cable.get(direction)
            if port is None or self._fire(direction, "datagram"):
                continue
            try:
                out.sendto(data, ("127.0.0.1", port))
            except OSError:
                pass  # its process is gone

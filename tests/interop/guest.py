"""A QEMU guest running Linux's Soft-RoCE (rdma_rxe), for tests that talk to it.

    image = guest_image.build()                 # or guest_image.Unavailable: skip (77)
    cable = free_ports(2)                       # UDP: the guest's end, the other end
    with Guest(image, "rig_serve 18515 ibv_rc_pingpong -g 1 -m 1024",
               workdir=out, cable=Cable(cable[0], cable[1]), forwards={tcp: 18515}) as g:
        g.wait_for(r"^RIG-LISTENING 18515$", timeout=60)
        ...                                     # the other end (rig, or a second Guest)
        status = g.wait_exit(timeout=120)       # the command's exit status

The guest (tests/interop/init.sh) runs `command` with busybox's sh once rxe0 is up; its
console (serial port) is read line by line into Guest.console and written to
<workdir>/<name>.console.log as it comes. Its RoCE NIC is a virtio-net on QEMU's
`-netdev dgram` between 127.0.0.1:cable.local (QEMU binds it) and 127.0.0.1:cable.remote
(one Ethernet frame per UDP datagram, no FCS), captured by `-object filter-dump` into
<workdir>/<name>.pcap (both directions, every run). TCP reaches the guest through a
user-mode NIC (10.0.2.15 in the guest) whose host ends are 127.0.0.1 only: each
`forwards` entry host_port: guest_port is a hostfwd, and the guest reaches the host's
127.0.0.1 at 10.0.2.2 (its only route there; it has no default route); that NIC's frames
go to <workdir>/<name>.tcp.pcap.

Under TCG (no KVM, by design) a boot costs 4-5 s of one host core, 5-17 s of wall time as
the machine is loaded (docs/interop.md).
A Guest is for one thread; kill() (or leaving the with block) ends QEMU in every case.
"""

from __future__ import annotations

import random
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import guest_image

EXIT = re.compile(r"^RIG-GUEST-EXIT (\d+)$")
READY = re.compile(r"^RIG-GUEST-READY ([0-9.]+)$")
GUEST_TCP_ADDRESS = "10.0.2.15"
HOST_FROM_GUEST = "10.0.2.2"


class GuestError(Exception):
    """The guest did not do what was waited for (timeout, early exit, QEMU refused to start).
    The message ends with the console's last lines."""


class PortInUse(GuestError):
    """QEMU could not bind one of its 127.0.0.1 ports (another process took it first)."""


def qemu() -> str | None:
    return shutil.which("qemu-system-x86_64")


SKIPPED = 77  # ctest's SKIP_RETURN_CODE for the interop tests


def image_or_skip() -> guest_image.Image | None:
    """The guest image for a test, or None after printing why the test skips (exit SKIPPED):
    no qemu-system-x86_64, or Debian's packages cannot be had (guest_image.Unavailable)."""
    if qemu() is None:
        print("skipped: qemu-system-x86_64 not found (tools/deps.sh installs qemu-system-x86)")
        return None
    try:
        return guest_image.build()
    except guest_image.Unavailable as e:
        print(f"skipped: {e}")
        return None


def _local_port_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_ports(count: int) -> list[int]:
    """`count` distinct ports that are free on 127.0.0.1 for both TCP and UDP now. They come
    from outside the kernel's ephemeral range (ip_local_port_range), where no outgoing
    connection takes one in the meantime; only another process binding the same port
    explicitly can race with QEMU, and Guest.start raises PortInUse when it does."""
    low, high = _local_port_range()
    candidates = [p for p in range(20000, 65000) if not low <= p <= high]
    chosen: list[int] = []
    for port in random.sample(candidates, len(candidates)):
        if port in chosen:
            continue
        try:
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                with socket.socket(socket.AF_INET, kind) as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        chosen.append(port)
        if len(chosen) == count:
            return chosen
    raise RuntimeError(f"no {count} free ports on 127.0.0.1")


@dataclass(frozen=True)
class Cable:
    """The RoCE NIC's UDP ends, both on 127.0.0.1: QEMU binds `local` and sends to `remote`."""
    local: int
    remote: int

    def reversed(self) -> "Cable":
        return Cable(self.remote, self.local)


@dataclass(frozen=True)
class Address:
    """The guest's RoCE NIC: its MAC, IPv4 address (/prefix) and MTU."""
    mac: str = "52:54:00:00:00:02"
    ip: str = "10.77.0.2"
    prefix: int = 24
    mtu: int = 1500


class Guest:
    def __init__(self, image: guest_image.Image, command: str, *, workdir: Path, cable: Cable,
                 address: Address = Address(), forwards: dict[int, int] | None = None,
                 name: str = "guest", memory_mib: int = 512):
        self.image = image
        self.command = command
        self.workdir = Path(workdir)
        self.cable = cable
        self.address = address
        self.forwards = dict(forwards or {})
        self.name = name
        self.memory_mib = memory_mib
        self.pcap = self.workdir / f"{name}.pcap"  # the RoCE NIC's frames
        self.tcp_pcap = self.workdir / f"{name}.tcp.pcap"  # the user-mode NIC's (TCP exchange)
        self.console_path = self.workdir / f"{name}.console.log"
        self.stderr_path = self.workdir / f"{name}.qemu.log"
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._process: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None
        self.started_at = 0.0
        self.ready_at: float | None = None  # host seconds from start to RIG-GUEST-READY
        self.exit_status: int | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def qemu_args(self) -> list[str]:
        binary = qemu()
        if binary is None:
            raise FileNotFoundError("qemu-system-x86_64 not found (Debian package qemu-system-x86)")
        env = self.workdir / f"{self.name}.env"
        env.write_text(f"RIG_MAC={self.address.mac}\nRIG_IP={self.address.ip}\n"
                       f"RIG_PREFIX={self.address.prefix}\nRIG_MTU={self.address.mtu}\n")
        cmd = self.workdir / f"{self.name}.command.sh"
        cmd.write_text(self.command + "\n")
        user = ",".join(["user", "id=tcp", "net=10.0.2.0/24", "host=" + HOST_FROM_GUEST, "ipv6=off"] +
                        [f"hostfwd=tcp:127.0.0.1:{h}-:{g}" for h, g in self.forwards.items()])
        roce = (f"dgram,id=roce,local.type=inet,local.host=127.0.0.1,local.port={self.cable.local},"
                f"remote.type=inet,remote.host=127.0.0.1,remote.port={self.cable.remote}")
        tcp_mac = self.address.mac[:-5] + "01:" + self.address.mac[-2:]  # the RoCE MAC's neighbour
        return [binary, "-accel", "tcg", "-M", "pc", "-m", str(self.memory_mib), "-smp", "1",
                "-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none",
                "-serial", "stdio", "-no-reboot",
                "-kernel", str(self.image.kernel), "-initrd", str(self.image.initramfs),
                "-append", "console=ttyS0 panic=-1 quiet",
                "-netdev", roce,
                "-device", f"virtio-net-pci,netdev=roce,mac={self.address.mac},addr=3,romfile=",
                "-object", f"filter-dump,id=capture,netdev=roce,file={self.pcap}",
                "-netdev", user,
                "-device", f"virtio-net-pci,netdev=tcp,mac={tcp_mac},addr=4,romfile=",
                "-object", f"filter-dump,id=tcp-capture,netdev=tcp,file={self.tcp_pcap}",
                "-fw_cfg", f"name=opt/rig/env,file={env}",
                "-fw_cfg", f"name=opt/rig/cmd,file={cmd}"]

    def start(self) -> "Guest":
        self.workdir.mkdir(parents=True, exist_ok=True)
        args = self.qemu_args()
        (self.workdir / f"{self.name}.qemu-args").write_text(" ".join(args) + "\n")
        self.started_at = time.monotonic()
        self._process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=open(self.stderr_path, "wb"), start_new_session=True)
        self._reader = threading.Thread(target=self._read, name=f"{self.name}-console", daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self._process and self._process.stdout
        with open(self.console_path, "w", encoding="utf-8", errors="replace") as log:
            for raw in self._process.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                log.write(line + "\n")
                log.flush()
                with self._changed:
                    if self.ready_at is None and READY.match(line):
                        self.ready_at = time.monotonic() - self.started_at
                    m = EXIT.match(line)
                    if m and self.exit_status is None:
                        self.exit_status = int(m.group(1))
                    self._lines.append(line)
                    self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def kill(self) -> None:
        """Ends QEMU (SIGTERM, which lets it close the capture; SIGKILL after 5 s) and the
        console reader. Safe to call more than once and after QEMU exited on its own."""
        p = self._process
        if p is None:
            return
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self._reader:
            self._reader.join(5)
        for stream in (p.stdin, p.stdout):
            if stream:
                try:
                    stream.close()
                except OSError:
                    pass

    def __enter__(self) -> "Guest":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()

    # --- console ---------------------------------------------------------------------------

    @property
    def console(self) -> str:
        with self._changed:
            return "\n".join(self._lines) + ("\n" if self._lines else "")

    def tail(self, lines: int = 40) -> str:
        with self._changed:
            return "\n".join(self._lines[-lines:])

    def _error(self, what: str, kind=GuestError) -> GuestError:
        qemu_log = self.stderr_path.read_text(errors="replace").strip() if self.stderr_path.exists() else ""
        return kind(f"{self.name}: {what}\n--- qemu: {qemu_log or '(nothing)'}\n"
                    f"--- last console lines of {self.console_path}:\n{self.tail()}")

    def wait_for(self, pattern: str | re.Pattern, timeout: float, since: int = 0) -> re.Match:
        """The first console line from line `since` on that matches `pattern` (re.search).
        Raises GuestError at the timeout or when the guest exits without one."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        seen = since
        with self._changed:
            while True:
                for line in self._lines[seen:]:
                    m = regex.search(line)
                    if m:
                        return m
                seen = len(self._lines)
                left = deadline - time.monotonic()
                if self.exit_status is not None:
                    raise self._error(f"the command exited with status {self.exit_status} before a line "
                                      f"matched {regex.pattern!r}")
                if self._reader is not None and not self._reader.is_alive():
                    try:
                        code = self._process.wait(5) if self._process else None
                    except subprocess.TimeoutExpired:
                        code = None
                    qemu_log = self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""
                    kind = PortInUse if "Address already in use" in qemu_log else GuestError
                    raise self._error(f"QEMU exited (status {code}) before a line matched {regex.pattern!r}", kind)
                if left <= 0:
                    raise self._error(f"no line matched {regex.pattern!r} within {timeout:.0f} s")
                self._changed.wait(min(left, 1.0))

    def wait_ready(self, timeout: float = 120) -> float:
        """Waits for RIG-GUEST-READY; returns the host seconds from start to it (boot time)."""
        self.wait_for(READY, timeout)
        assert self.ready_at is not None
        return self.ready_at

    def go(self, timeout: float = 120) -> None:
        """Releases a command waiting in rig_wait_go (once the guest reads its console)."""
        self.wait_ready(timeout)
        assert self._process and self._process.stdin
        self._process.stdin.write(b"go\n")
        self._process.stdin.flush()

    def wait_exit(self, timeout: float) -> int:
        """The command's exit status (RIG-GUEST-EXIT), once QEMU has powered off (the capture is
        complete then). Raises GuestError at the timeout, killing nothing: call kill()."""
        self.wait_for(EXIT, timeout)
        assert self._process and self.exit_status is not None
        try:
            self._process.wait(max(5.0, timeout / 10))
        except subprocess.TimeoutExpired:
            raise self._error("printed its exit status but did not power off")
        if self._reader:
            self._reader.join(5)
        return self.exit_status

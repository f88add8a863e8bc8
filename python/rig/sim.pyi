"""Simulated machines: two computers with a GPU and a bnxt NIC each, cabled (rig/sim/pair.hpp)."""
from typing import Iterator

from . import Machine

topologies: list[str]

class Computer:
    @property
    def name(self) -> str:
        """"machine 1" or "machine 2"."""
    @property
    def machine(self) -> Machine:
        """Keeps both computers running while it (or anything made on it) lives."""
    @property
    def gpu_bus(self) -> str: ...
    @property
    def nic_bus(self) -> str: ...

class Machines:
    @property
    def topology(self) -> str: ...
    @property
    def one(self) -> Computer: ...
    @property
    def two(self) -> Computer: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Computer: ...
    def __iter__(self) -> Iterator[Computer]: ...

def machines(topology: str = "switch", gpu_memory: int = 64 << 20, bar: int = 0, cabling: str = "wire",
             gpu: str | None = None, nic: str | None = None) -> Machines:
    """Two simulated computers as p2p_copy builds them, cabled, running; no driver opened.

    topology: a name of `topologies`, or a `rig snapshot` directory with gpu and nic bus addresses.
    gpu_memory, bar: bytes, powers of two (bar 0: all of the memory). cabling: "wire" or "udp".
    rig.Error naming the machine and what failed; ValueError for a size that is no power of two.
    """

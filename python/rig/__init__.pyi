"""rig: moves data between GPUs and RDMA NICs directly over PCI Express.

Units: sizes and offsets in bytes; bus addresses as Linux spells them ("0000:41:00.0").
Errors: rig.Error (a RuntimeError) with the library's message for every runtime failure;
ValueError for misuse (what the C++ API throws as std::invalid_argument).
"""
import os
from typing import Any, Mapping

from . import bnxt as bnxt
from . import gpu as gpu
from . import sim as sim

class Error(RuntimeError):
    """A runtime failure the library reports, naming the thing and what failed."""

class Function:
    """A PCI function's identity."""
    @property
    def bus(self) -> str: ...
    @property
    def vendor(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def class_code(self) -> int:
        """24 bits: base class, subclass, programming interface."""

class LinkState:
    """A PCI Express link's speed and width."""
    @property
    def generation(self) -> int: ...
    @property
    def width(self) -> int: ...
    @property
    def gigatransfers(self) -> float: ...
    @property
    def bytes_per_second(self) -> int:
        """What the link carries each way after line encoding."""

class Redirect:
    @property
    def bus(self) -> str: ...
    @property
    def control(self) -> int:
        """ACS Control; RR 0x4, CR 0x8, EC 0x20 redirect."""

class RouteLink:
    @property
    def function(self) -> str: ...
    @property
    def port(self) -> str: ...
    @property
    def status(self) -> LinkState | None: ...
    @property
    def capability(self) -> LinkState | None: ...
    @property
    def port_capability(self) -> LinkState | None: ...
    def capable(self) -> LinkState | None: ...
    def downtrained(self) -> bool: ...

class Route:
    """Why forwards and distance answered as they did."""
    @property
    def provider(self) -> str: ...
    @property
    def client(self) -> str: ...
    @property
    def verdict(self) -> str:
        """"direct", "through host bridge", "not supported" or "unread"."""
    @property
    def distance(self) -> str | None:
        """"switch", "bridge", "system", or None where unread."""
    @property
    def unread(self) -> str: ...
    @property
    def common(self) -> str | None: ...
    @property
    def acs_read(self) -> bool: ...
    @property
    def redirects(self) -> list[Redirect]: ...
    @property
    def provider_host_bridge(self) -> str: ...
    @property
    def client_host_bridge(self) -> str: ...
    @property
    def cpu_rule(self) -> bool: ...
    @property
    def cpu(self) -> str: ...
    @property
    def host_bridge_rule(self) -> str: ...
    @property
    def links(self) -> list[RouteLink]: ...
    @property
    def bottleneck(self) -> LinkState | None: ...
    @property
    def bottleneck_bytes_per_second(self) -> int | None: ...
    @property
    def forwards(self) -> bool: ...
    def downtrained(self) -> list[RouteLink]: ...
    def explain(self) -> str: ...

class RankedNic:
    nic: str
    forwards: bool
    distance: str | None
    numa: str
    numa_node: int | None
    bottleneck: LinkState | None
    bottleneck_bytes_per_second: int | None
    tie: bool
    common: str | None
    host_bridge: str
    why: str

class Pairing:
    gpu: str
    ranked: list[RankedNic]
    nic: str | None
    overridden: bool
    why: str

class Machine:
    """A computer whose PCI functions this process reaches. Safe from several threads."""
    @staticmethod
    def local() -> Machine:
        """This computer, read from /sys."""
    @staticmethod
    def at(root: str | os.PathLike[str]) -> Machine:
        """The sysfs tree under root (a `rig snapshot`); nothing can be taken from it."""
    @property
    def name(self) -> str | None: ...
    @property
    def page(self) -> int:
        """The page size in bytes."""
    def functions(self) -> list[Function]:
        """The functions in bus order. rig.Error where they cannot be listed."""
    def forwards(self, provider: str, client: str) -> bool: ...
    def distance(self, a: str, b: str) -> str | None: ...
    def route(self, provider: str, client: str) -> Route: ...
    def host_bridge_route(self, provider: str, client: str) -> Route: ...
    def rank_nics(self, bus: str) -> list[RankedNic]:
        """ValueError for no such function."""
    def pair_nics(self, pairs: Mapping[str, str] | str | None = None) -> list[Pairing]:
        """pairs pins GPUs to NICs: {gpu: nic} or "GPU=NIC,..."."""
    def topo(self, pairs: Mapping[str, str] | str | None = None) -> dict[str, Any]:
        """What `rig topo --json` prints, as a dict."""
    def ls(self) -> dict[str, Any]:
        """What `rig ls --json` prints, as a dict."""

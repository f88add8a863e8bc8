"""GPUs and their memory (rig/gpu/gpu.hpp). Memory exports DLPack, zero-copy."""
from typing import Any, Union


from . import Machine

# A contiguous buffer: bytes, bytearray, memoryview, numpy arrays, mmap.
Buffer = Union[bytes, bytearray, memoryview, Any]

class Space:
    """The virtual address space the GPUs of one vendor share."""
    def __init__(self, base: int = 0x10 << 32, bytes: int = 1 << 40) -> None: ...

class Runs:
    @property
    def runs(self) -> list[tuple[int, int]]:
        """[(bus address, bytes), ...], each a multiple of 4096."""
    @property
    def offset(self) -> int: ...

class Memory:
    """GPU memory at an address of its vendor's Space (Gpu.alloc)."""
    @property
    def address(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def gpu(self) -> str: ...
    @property
    def data_ptr(self) -> int:
        """Where the process addresses its first byte. rig.Error where it sees no one range."""
    def runs(self, offset: int = 0, bytes: int | None = None) -> Runs: ...
    def __dlpack__(self, stream: int | None = None) -> Any:
        """A DLPack 0.6 capsule: 1-D uint8, zero-copy, keeping the memory alive."""
    def __dlpack_device__(self) -> tuple[int, int]:
        """(1, 0) kDLCPU for the simulated GPU; (2, n) kDLCUDA; (10, n) kDLROCM."""

class HostMemory:
    """Host memory pinned for a GPU's copy engine; a writable buffer (memoryview(host))."""
    @property
    def bytes(self) -> int: ...

class Gpu:
    """A GPU; calls that run on it release the GIL."""
    @staticmethod
    def open(machine: Machine, bus: str, space: Space | None = None) -> Gpu:
        """The simulated GPU at bus. rig.Error naming the bus; ValueError for no bus address."""
    @property
    def name(self) -> str: ...
    @property
    def bus(self) -> str: ...
    @property
    def machine(self) -> Machine: ...
    def alloc(self, bytes: int) -> Memory:
        """rig.Error naming the GPU and the size when out of memory; ValueError for 0."""
    def free(self, memory: Memory) -> None:
        """rig.Error while a NIC region covers it or a DLPack tensor views it."""
    def close(self) -> None: ...
    def host(self, bytes: int) -> HostMemory: ...
    def fill(self, memory: Memory, seed: int, offset: int = 0, bytes: int | None = None) -> None: ...
    def checksum(self, memory: Memory, offset: int = 0, bytes: int | None = None) -> int: ...
    def upload(self, memory: Memory, offset: int, data: Buffer) -> None: ...
    def download(self, memory: Memory, offset: int, bytes: int) -> bytes: ...

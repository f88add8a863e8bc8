"""GPU memory from Python: a send from machine 1's GPU into machine 2's, zero-copy DLPack
views of that memory in torch and numpy, and completions as small objects."""
import numpy as np
import pytest
import torch

import rig
import rig.bnxt
from conftest import wait_one

SIZE = 256 << 10


def test_gpu_to_gpu_send_verified_by_checksum_and_torch(pair):
    a, b = pair
    source, destination = a.gpu.alloc(SIZE), b.gpu.alloc(SIZE)
    sent = torch.from_dlpack(source)
    sent.copy_(torch.randint(0, 256, (SIZE,), dtype=torch.uint8, generator=torch.Generator().manual_seed(7)))
    b.gpu.fill(destination, seed=99)  # another pattern: a send that moved nothing cannot match
    received = torch.from_dlpack(destination)
    assert not torch.equal(sent, received)

    assert b.qp.recv(region=rig.bnxt.Region.device(b.nic, destination), offset=0, bytes=SIZE, id=21)
    assert a.qp.send(region=rig.bnxt.Region.device(a.nic, source), offset=0, bytes=SIZE, id=12, immediate=0xC0FFEE)
    got = wait_one(b.cq)
    assert (got.id, got.op, got.ok, got.bytes, got.immediate) == (21, "recv", True, SIZE, 0xC0FFEE)
    assert got.status == "OK" and got.status.code == 0 and got.status.name == "OK"
    done = wait_one(a.cq)
    assert (done.id, done.op, done.status.name, done.bytes, done.immediate) == (12, "send", "OK", SIZE, None)

    assert a.gpu.checksum(source) == b.gpu.checksum(destination)
    assert torch.equal(sent, received)


def test_read_pulls_a_peers_gpu_memory_into_a_host_region(pair):
    a, b = pair
    source = a.gpu.alloc(64 << 10)
    a.gpu.fill(source, seed=5)
    remote = rig.bnxt.Region.device(a.nic, source)
    into = rig.bnxt.Region.host(b.nic, 64 << 10)
    assert b.qp.read(region=into, remote=remote.remote(4096), offset=0, bytes=8192, id=3)
    done = wait_one(b.cq)
    assert (done.id, done.op, done.status.name, done.bytes) == (3, "read", "OK", 8192)
    assert into.read(0, 8192) == a.gpu.download(source, 4096, 8192)
    out = bytearray(8192)
    assert into.read(0, out=out) is out and bytes(out) == a.gpu.download(source, 4096, 8192)


def test_memory_exports_itself_zero_copy(pair):
    a, _ = pair
    memory = a.gpu.alloc(SIZE)
    assert memory.__dlpack_device__() == (1, 0)  # kDLCPU: the simulated GPU's memory is this process's
    tensor, array = torch.from_dlpack(memory), np.from_dlpack(memory)
    assert (tensor.dtype, tuple(tensor.shape), array.dtype, array.shape) == (torch.uint8, (SIZE,), np.uint8, (SIZE,))
    assert tensor.data_ptr() == memory.data_ptr == array.ctypes.data
    a.gpu.fill(memory, seed=1)
    assert bytes(array[:4096]) == a.gpu.download(memory, 0, 4096)  # the GPU's writes, seen by numpy
    before = a.gpu.checksum(memory)
    tensor[1000] ^= 0xFF  # a write through the tensor is a write to GPU memory
    assert a.gpu.checksum(memory) != before
    assert array[1000] == tensor[1000].item()


def test_memory_past_the_bar_exports_nothing():
    # small-bar: a 1 MiB GPU with a 256 KiB BAR; memory behind it has a pointer, memory past
    # it neither runs nor one.
    one, _ = rig.sim.machines(topology="small-bar", gpu_memory=1 << 20, bar=256 << 10)
    gpu = rig.gpu.Gpu.open(one.machine, one.gpu_bus)
    behind, past = gpu.alloc(256 << 10), gpu.alloc(256 << 10)
    assert torch.from_dlpack(behind).data_ptr() == behind.data_ptr
    with pytest.raises(rig.Error, match="past BAR2"):
        past.__dlpack__()
    with pytest.raises(rig.Error, match=one.gpu_bus):
        past.runs()

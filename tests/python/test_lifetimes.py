"""Lifetimes: a DLPack tensor keeps its GPU memory, a region keeps the object whose pages it
pins, each until the last holder lets go (nixl's and prime-rl's failures: memory collected
or reused under a live view or registration)."""
import gc
import weakref

import pytest
import torch

import rig
import rig.bnxt
import rig.gpu
from conftest import page_aligned, wait_one

GPU_MEMORY = 1 << 20


def test_tensor_keeps_memory_after_the_memory_object_goes():
    one, _ = rig.sim.machines(gpu_memory=GPU_MEMORY)
    gpu = rig.gpu.Gpu.open(one.machine, one.gpu_bus)
    memory = gpu.alloc(GPU_MEMORY)  # all of it: another alloc succeeds only once it is back
    gpu.fill(memory, seed=3)
    tensor = torch.from_dlpack(memory)
    expected = tensor.clone()
    del memory
    gc.collect()
    with pytest.raises(rig.Error, match="out of memory"):
        gpu.alloc(GPU_MEMORY)
    assert torch.equal(tensor, expected)
    del tensor
    gc.collect()
    again = gpu.alloc(GPU_MEMORY)
    assert again.bytes == GPU_MEMORY


def test_free_refuses_while_a_tensor_views_the_memory():
    one, _ = rig.sim.machines(gpu_memory=GPU_MEMORY)
    gpu = rig.gpu.Gpu.open(one.machine, one.gpu_bus)
    memory = gpu.alloc(64 << 10)
    tensor = torch.from_dlpack(memory)
    with pytest.raises(rig.Error, match="viewed by 1 DLPack tensor"):
        gpu.free(memory)
    tensor[0] = 7  # still the GPU's memory
    del tensor
    gc.collect()
    gpu.free(memory)
    with pytest.raises(ValueError, match="freed"):
        memory.runs()


def test_an_unconsumed_capsule_gives_its_hold_back():
    one, _ = rig.sim.machines(gpu_memory=GPU_MEMORY)
    gpu = rig.gpu.Gpu.open(one.machine, one.gpu_bus)
    memory = gpu.alloc(64 << 10)
    capsule = memory.__dlpack__()
    with pytest.raises(rig.Error, match="DLPack"):
        gpu.free(memory)
    del capsule
    gpu.free(memory)


def test_region_keeps_a_deleted_tensor_until_deregistered(iommu_pair):
    a, b = iommu_pair
    buffer = page_aligned(64 << 10)
    tensor = torch.frombuffer(buffer, dtype=torch.uint8)
    alive = weakref.ref(tensor)
    region = rig.bnxt.Region.pages(b.nic, tensor)
    del tensor
    gc.collect()
    assert alive() is not None, "the registration let its tensor go"

    source = rig.bnxt.Region.host(a.nic, 64 << 10)
    source.write(0, bytes(range(256)) * 256)
    assert b.qp.recv(region, id=1) and a.qp.send(source, bytes=64 << 10, id=2)
    assert wait_one(b.cq).ok and wait_one(a.cq).ok
    assert bytes(buffer[:512]) == bytes(range(256)) * 2
    assert alive() is not None

    region.deregister()
    gc.collect()
    assert alive() is None, "deregister kept the tensor"
    region.deregister()  # again: nothing


def test_region_of_a_temporary_keeps_it():
    one, _ = rig.sim.machines(topology="iommu", gpu_memory=GPU_MEMORY)
    nic = rig.bnxt.Nic.open(one.machine, one.nic_bus)
    region = rig.bnxt.Region.pages(nic, torch.frombuffer(page_aligned(8192), dtype=torch.uint8))
    gc.collect()
    assert region.kind == "pages" and region.bytes == 8192
    region.deregister()


def test_device_region_keeps_its_memory_and_free_refuses_while_registered(pair):
    a, _ = pair
    memory = a.gpu.alloc(64 << 10)
    region = rig.bnxt.Region.device(a.nic, memory)
    assert region.object is memory
    with pytest.raises(rig.Error, match=a.nic.bus):
        a.gpu.free(memory)  # B18: a NIC still reaches it
    region.deregister()
    assert region.object is None
    a.gpu.free(memory)


def test_objects_outlive_the_machines_object():
    # Only the NIC is left: it keeps the simulated computers running, so its close works.
    one, _ = rig.sim.machines(gpu_memory=GPU_MEMORY)
    nic = rig.bnxt.Nic.open(one.machine, one.nic_bus)
    del one, _
    gc.collect()
    cq = rig.bnxt.Cq.create(nic, 8)
    assert cq.poll() == []
    nic.close()
    assert nic.closed
    with pytest.raises(ValueError):
        cq.poll()

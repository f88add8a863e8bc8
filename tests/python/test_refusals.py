"""What Region.pages and Region.device refuse before anything is registered (ValueError
naming which check failed: nixl#563's non-contiguous tensor among them), and the runtime
failures that are rig.Error with the library's message."""
import numpy as np
import pytest
import torch

import rig
import rig.bnxt
import rig.gpu
from conftest import page_aligned


@pytest.fixture
def nic():
    one, _ = rig.sim.machines(topology="iommu", gpu_memory=1 << 20)
    return rig.bnxt.Nic.open(one.machine, one.nic_bus)


def aligned_tensor(nbytes):
    return torch.frombuffer(page_aligned(nbytes), dtype=torch.uint8)


def test_a_contiguous_page_aligned_tensor_registers(nic):
    region = rig.bnxt.Region.pages(nic, aligned_tensor(16384).view(4, 4096))
    assert (region.kind, region.bytes) == ("pages", 16384)


def test_non_contiguous_tensor_is_refused(nic):
    matrix = aligned_tensor(16384).view(64, 256)
    with pytest.raises(ValueError, match=r"not contiguous: shape \(64, 128\), strides \(256, 1\)"):
        rig.bnxt.Region.pages(nic, matrix[:, :128])
    with pytest.raises(ValueError, match="not contiguous"):
        rig.bnxt.Region.pages(nic, matrix.t())


def test_non_contiguous_buffer_is_refused(nic):
    array = np.frombuffer(page_aligned(16384), dtype=np.uint8)
    with pytest.raises(ValueError, match="not contiguous"):
        rig.bnxt.Region.pages(nic, memoryview(array)[::2])


def test_misaligned_tensor_is_refused_naming_the_address(nic):
    tensor = aligned_tensor(16384)
    with pytest.raises(ValueError, match=r"start at 0x[0-9a-f]+, not on a 4096-byte page \(misaligned by 1 bytes\)"):
        rig.bnxt.Region.pages(nic, tensor[1:])


class OnCuda:
    """A DLPack producer on CUDA device 1: __dlpack__ must not even be asked."""

    def __dlpack_device__(self):
        return (2, 1)

    def __dlpack__(self, stream=None):
        raise AssertionError("asked for the tensor of a device the NIC cannot pin")


def test_tensor_on_another_device_is_refused(nic):
    with pytest.raises(ValueError, match="on CUDA device 1: the NIC pins memory of this process"):
        rig.bnxt.Region.pages(nic, OnCuda())


def test_read_only_and_empty_and_foreign_objects_are_refused(nic):
    with pytest.raises(ValueError, match="not writable"):
        rig.bnxt.Region.pages(nic, bytes(4096))
    with pytest.raises(ValueError, match="0 bytes"):
        rig.bnxt.Region.pages(nic, aligned_tensor(4096)[:0])
    with pytest.raises(TypeError, match="neither DLPack"):
        rig.bnxt.Region.pages(nic, 42)


def test_memory_of_another_machine_is_refused(pair):
    a, b = pair
    memory = a.gpu.alloc(64 << 10)
    with pytest.raises(ValueError, match=r"is on machine sim1, the NIC 0000:04:00.0 on machine sim2"):
        rig.bnxt.Region.device(b.nic, memory)


def test_pages_a_nic_without_iommu_cannot_pin_is_a_rig_error(pair):
    a, _ = pair
    with pytest.raises(rig.Error, match=a.nic.bus):
        rig.bnxt.Region.pages(a.nic, aligned_tensor(4096))


def test_runtime_failures_are_rig_errors_with_the_librarys_message():
    one, _ = rig.sim.machines(topology="acs", gpu_memory=1 << 20)
    gpu = rig.gpu.Gpu.open(one.machine, one.gpu_bus)
    nic = rig.bnxt.Nic.open(one.machine, one.nic_bus)
    with pytest.raises(rig.Error, match=r"(?s)^0000:04:00.0: the bus does not carry.*0000:02:00.0 ACSCtl 0x001d") as refused:  # the NIC, and the bridge that redirects
        rig.bnxt.Region.device(nic, gpu.alloc(64 << 10))
    assert isinstance(refused.value, RuntimeError)
    with pytest.raises(rig.Error, match=r"out of memory for 2 MiB"):
        gpu.alloc(2 << 20)
    with pytest.raises(ValueError):
        gpu.alloc(0)
    with pytest.raises(rig.Error, match="0000:09:00.0"):
        rig.bnxt.Nic.open(one.machine, "0000:09:00.0")
    with pytest.raises(ValueError):
        rig.bnxt.Nic.open(one.machine, "not a bus address")


def test_posts_check_their_region(pair):
    a, b = pair
    region = rig.bnxt.Region.host(a.nic, 4096)
    with pytest.raises(ValueError):
        a.qp.send(region=region, offset=0, bytes=8192, id=1)
    other = rig.bnxt.Region.host(b.nic, 4096)
    with pytest.raises(ValueError):
        a.qp.send(region=other, id=1)

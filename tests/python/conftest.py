"""Fixtures of the rig module's tests: two simulated machines, each side's GPU, NIC,
completion queue and queue pair opened, the two queue pairs connected.

ctest runs these with PYTHONPATH at the build tree's package (tests/python/CMakeLists.txt);
RIG_TOOL names the `rig` executable and RIG_CASE_TREES the case fixtures' sysfs trees.
"""
import dataclasses
import mmap

import pytest

import rig
import rig.bnxt
import rig.gpu

PAGE = 4096


@dataclasses.dataclass
class Side:
    computer: rig.sim.Computer
    gpu: rig.gpu.Gpu
    nic: rig.bnxt.Nic
    cq: rig.bnxt.Cq
    qp: rig.bnxt.Qp


def open_side(computer, depth=16):
    gpu = rig.gpu.Gpu.open(computer.machine, computer.gpu_bus)
    nic = rig.bnxt.Nic.open(computer.machine, computer.nic_bus)
    cq = rig.bnxt.Cq.create(nic, 4 * depth)
    qp = rig.bnxt.Qp.create(nic, cq, send_depth=depth, recv_depth=depth)
    return Side(computer, gpu, nic, cq, qp)


def connected(topology="switch", gpu_memory=1 << 20, depth=16):
    one, two = rig.sim.machines(topology=topology, gpu_memory=gpu_memory)
    a, b = open_side(one, depth), open_side(two, depth)
    a.qp.connect(b.qp.endpoint())
    b.qp.connect(a.qp.endpoint())
    return a, b


@pytest.fixture
def pair():
    """Two connected sides on the switch topology, 1 MiB of GPU memory each."""
    return connected()


@pytest.fixture
def iommu_pair():
    """Two connected sides whose NICs are behind an IOMMU: they pin any page of the process."""
    return connected(topology="iommu")


def wait_one(cq, timeout=5.0):
    """The next completion of cq, failing the test if none comes within timeout seconds."""
    done = cq.wait(timeout=timeout, max=1)
    assert len(done) == 1, f"no completion on CQ {cq.id} within {timeout} s"
    return done[0]


def page_aligned(nbytes):
    """A writable mmap of nbytes: it starts on a page, as Region.pages asks."""
    return mmap.mmap(-1, nbytes)

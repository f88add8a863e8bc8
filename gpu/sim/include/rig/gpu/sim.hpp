// rig/gpu/sim.hpp: the driver of the simulated GPU (rig/gpu/sim/registers.hpp), written
// against rig::pci::Function as a driver for real hardware is: registers only through a
// Window on BAR0, VRAM through a Window on BAR2, DMA by the GPU's own engine. It runs on
// any machine whose function at `bus` is that GPU (a rig::sim machine with the model of
// rig/gpu/sim/model.hpp, or a remote one reached by a transport).
//
// Memory is allocated in 64 KiB granules of VRAM, first fit from offset 0 (so behind BAR2
// first), not necessarily contiguous; the GPU's segment table maps it at its Space
// address, one entry per extent. Memory::runs are exact: BAR2's bus address plus each
// extent's VRAM offset. VRAM may be larger than BAR2, as a GPU with a 256 MiB BAR1 and
// 80 GiB of memory (docs/bugs.md, B16): bytes past the BAR have no runs, and Memory::runs
// says so with the BAR's size, the memory's, and how much of the BAR is free. A peer maps
// memory by pointing its segment table at the owner's runs, so its accesses cross the bus
// (and are refused where the bus does not forward them: the map checks the route first).
// The engine copies to and from host memory at HostBuffer::runs by DMA; Gpu::host is DMA
// memory of the GPU's function (Function::alloc_dma), at physical addresses or at IOVAs of
// the GPU's IOMMU domain as the machine places it. Upload and download go through the
// owner's BAR2 window, or for memory past it through 256 KiB of the GPU's DMA memory and
// the engine. There is no dma-buf: Memory::dmabuf is an Error pointing to runs.
#pragma once

#include <memory>
#include <string_view>

#include "rig/gpu/gpu.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::gpu::sim {

// The simulated GPU at `bus` of `machine`, taken for this process (Function::take) and
// reset, allocating at addresses of `space`. Error naming the bus where the take fails,
// the function is not the simulated GPU (its class code or ID register), or a BAR cannot
// be mapped. Throws std::invalid_argument if space is null or `bus` is not a bus address.
Result<Gpu> open(const pci::Machine& machine, std::string_view bus, std::shared_ptr<Space> space);

}  // namespace rig::gpu::sim

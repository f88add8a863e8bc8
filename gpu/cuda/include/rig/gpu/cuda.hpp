// rig/gpu/cuda.hpp: NVIDIA GPUs through CUDA (the driver API's virtual memory management
// for memory at Space addresses, Thrust for fill and checksum).
//
// The driver (libcuda.so.1) is not linked: its entry points are fetched at run time with
// cudaGetDriverEntryPointByVersion, so a program built with this backend starts on a
// machine without NVIDIA's driver, and count/open answer with an Error saying so.
//
// Memory (CUDA Driver API, "Virtual Memory Management"): alloc reserves the Space address
// with cuMemAddressReserve and refuses where CUDA places the reservation elsewhere (the
// address is only a hint to CUDA), creates pinned device memory with cuMemCreate (marked
// GPUDirect RDMA capable where the device supports it), maps it with cuMemMap and grants
// this GPU access with cuMemSetAccess; a peer's map grants the peer access to the same
// range. A process never sees the bus addresses of CUDA memory: NVIDIA's driver maps its
// BAR1 pages only for kernel importers (nvidia-peermem's nvidia_p2p_get_pages for an
// in-kernel RDMA driver, a dma-buf attachment), so Memory::runs is an Error that says so
// and points to Memory::dmabuf, a dma-buf of the range through the GPU's BAR1
// (cuMemGetHandleForAddressRange, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE), for a
// kernel importer such as ibv_reg_dmabuf_mr. rig's user-space NIC cannot use either.
// Copies to and from host memory go through the process: HostBuffer's window must be
// mapped.
#pragma once

#include <memory>

#include "rig/gpu/gpu.hpp"
#include "rig/result.hpp"

namespace rig::gpu::cuda {

// How many CUDA GPUs the process sees. Error naming the cause where CUDA cannot run: no
// driver ("no NVIDIA driver: CUDA driver version is insufficient ..."), a driver older
// than CUDA 12.
Result<int> count();

// CUDA GPU `ordinal` (0 .. count() - 1), allocating at addresses of `space` (the NVIDIA
// Space of the process). Error as count(), or naming the ordinal where there is no such
// GPU or it lacks virtual memory management. Throws std::invalid_argument if space is
// null or ordinal < 0.
Result<Gpu> open(int ordinal, std::shared_ptr<Space> space);

}  // namespace rig::gpu::cuda

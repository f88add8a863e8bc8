// rig/gpu/hip.hpp: AMD GPUs through HIP (Debian's ROCm 5.2) and libdrm's amdgpu interface.
//
// Memory the NIC must reach is a buffer object (BO) in CPU-visible VRAM, the part of VRAM
// behind the GPU's BAR, allocated through the GPU's DRM render node with libdrm
// (amdgpu_bo_alloc, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED) and mapped in that node's GPU
// virtual memory at the Space address with amdgpu_bo_va_op: the Space takes the place of
// libdrm's own VA manager (amdgpu_va_range_alloc). HIP's kernels and copies reach the BO
// through HIP's import of its dma-buf (hipImportExternalMemory); a peer maps the BO by
// importing the same dma-buf into its render node at the same address, and into HIP.
//
// Memory::runs reads the bus address of each page of the BO's CPU mapping from
// /proc/self/pagemap, which shows physical frame numbers only to a process with
// CAP_SYS_ADMIN (Linux Documentation/admin-guide/mm/pagemap.rst); elsewhere it is an
// Error saying so. The frames are the CPU's physical addresses of the BAR, which equal
// its bus addresses where the host bridge does not translate (x86-64). Userspace cannot
// pin a BO: the runs hold while the driver leaves the BO in place (it may move BOs under
// memory pressure); Memory::dmabuf, which the kernel pins for its importer, does not have
// that gap. Memory::dmabuf exports the whole BO (amdgpu_bo_export): its offset says where
// the asked range starts in it.
#pragma once

#include <memory>

#include "rig/gpu/gpu.hpp"
#include "rig/result.hpp"

namespace rig::gpu::hip {

// How many AMD GPUs HIP sees. Error naming the cause where there is no driver (no
// /dev/kfd) or HIP fails.
Result<int> count();

// HIP GPU `ordinal` (0 .. count() - 1) and its render node, allocating at addresses of
// `space` (the AMD Space of the process). Error as count(), or naming the ordinal and the
// file where there is no such GPU or its render node cannot be opened. Throws
// std::invalid_argument if space is null or ordinal < 0.
Result<Gpu> open(int ordinal, std::shared_ptr<Space> space);

}  // namespace rig::gpu::hip

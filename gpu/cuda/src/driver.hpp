// The CUDA driver API entry points the CUDA backend calls, fetched at run time through
// the runtime's cudaGetDriverEntryPointByVersion rather than linked: a binary that
// needs libcuda.so.1 does not start on a machine without NVIDIA's driver
// (docs/toolchain.md §1), and this one answers with an Error instead.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <string>

#include "rig/result.hpp"

namespace rig::gpu::cuda {

struct Driver {
    PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
    PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
    PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
    PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
    PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity = nullptr;
    PFN_cuMemAddressReserve_v10020 cuMemAddressReserve = nullptr;
    PFN_cuMemAddressFree_v10020 cuMemAddressFree = nullptr;
    PFN_cuMemCreate_v10020 cuMemCreate = nullptr;
    PFN_cuMemRelease_v10020 cuMemRelease = nullptr;
    PFN_cuMemMap_v10020 cuMemMap = nullptr;
    PFN_cuMemUnmap_v10020 cuMemUnmap = nullptr;
    PFN_cuMemSetAccess_v10020 cuMemSetAccess = nullptr;
    PFN_cuMemGetHandleForAddressRange_v11070 cuMemGetHandleForAddressRange = nullptr;

    // The process's driver, fetched once. Error where there is no NVIDIA driver or it
    // lacks one of the entry points (a driver older than CUDA 12).
    static Result<const Driver*> get();

    // A driver status in words: "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
    std::string describe(CUresult status) const;
};

// A runtime status in words: "cudaErrorInsufficientDriver (CUDA driver version is ...)".
std::string describe(cudaError_t status);

}  // namespace rig::gpu::cuda

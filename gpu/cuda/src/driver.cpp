// Fetching the driver API (driver.hpp). cudaGetDriverEntryPointByVersion answers
// cudaErrorInsufficientDriver where libcuda.so.1 is missing, and a null pointer where the
// driver lacks the symbol at the requested ABI; both become the Error every later call
// returns. The ABI requested is CUDA 12.0's: the oldest driver this backend supports.
#include "driver.hpp"

#include <utility>

namespace rig::gpu::cuda {
namespace {

constexpr unsigned abi = 12000;

template <class Pointer>
Result<void> fetch(const char* symbol, Pointer& to) {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t status = cudaGetDriverEntryPointByVersion(symbol, &function, abi, cudaEnableDefault, &found);
    if (status != cudaSuccess) return fail("CUDA: no NVIDIA driver: ", describe(status));
    if (function == nullptr || found != cudaDriverEntryPointSuccess)
        return fail("CUDA: the NVIDIA driver has no ", symbol,
                    " of CUDA 12.0 (a driver for CUDA 12 or later is needed)");
    to = reinterpret_cast<Pointer>(function);
    return {};
}

Result<Driver> load() {
    Driver d;
    for (auto r :
         {fetch("cuGetErrorName", d.cuGetErrorName), fetch("cuGetErrorString", d.cuGetErrorString),
          fetch("cuDeviceGet", d.cuDeviceGet), fetch("cuDeviceGetAttribute", d.cuDeviceGetAttribute),
          fetch("cuMemGetAllocationGranularity", d.cuMemGetAllocationGranularity),
          fetch("cuMemAddressReserve", d.cuMemAddressReserve), fetch("cuMemAddressFree", d.cuMemAddressFree),
          fetch("cuMemCreate", d.cuMemCreate), fetch("cuMemRelease", d.cuMemRelease), fetch("cuMemMap", d.cuMemMap),
          fetch("cuMemUnmap", d.cuMemUnmap), fetch("cuMemSetAccess", d.cuMemSetAccess),
          fetch("cuMemGetHandleForAddressRange", d.cuMemGetHandleForAddressRange)}) {
        if (!r) return std::unexpected(std::move(r).error());
    }
    return d;
}

}  // namespace

Result<const Driver*> Driver::get() {
    static const Result<Driver> driver = load();
    if (!driver) return std::unexpected(driver.error());
    return &*driver;
}

std::string Driver::describe(CUresult status) const {
    const char* name = nullptr;
    const char* words = nullptr;
    if (cuGetErrorName(status, &name) != CUDA_SUCCESS || name == nullptr) return "CUresult " + std::to_string(status);
    if (cuGetErrorString(status, &words) != CUDA_SUCCESS || words == nullptr) return name;
    return std::string(name) + " (" + words + ")";
}

std::string describe(cudaError_t status) {
    return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

}  // namespace rig::gpu::cuda

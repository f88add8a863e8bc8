// The boundary between the CUDA backend (g++, C++23) and its kernel file (nvcc, C++20):
// plain structs and status codes only, since nvcc cannot parse libstdc++'s <expected>
// (docs/toolchain.md §1). The g++ side turns a Status into a rig::Result.
#pragma once

#include <cstdint>

namespace rig::gpu::cuda::kernels {

// What a kernel call came to: code 0 is success, any other a cudaError_t; `message` is
// the CUDA error or the exception Thrust threw, in words, NUL-terminated.
struct Status {
    int code = 0;
    char message[200] = {};
};

// On CUDA device `device`: the fill pattern of `seed` over the `bytes` bytes at device
// address `address` (rig/gpu/pattern.hpp), and their checksum. Synchronous: the work is
// done when the call returns.
Status fill(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t seed);
Status checksum(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t* checksum);

}  // namespace rig::gpu::cuda::kernels

// The boundary between the HIP backend (g++, C++23) and its kernel file (clang-15 as
// hipcc, C++20): plain structs and status codes only, since clang cannot parse
// libstdc++ 12's <expected> (docs/toolchain.md §1). The g++ side turns a Status into a
// rig::Result.
#pragma once

#include <cstdint>

namespace rig::gpu::hip::kernels {

// What a kernel call came to: code 0 is success, any other a hipError_t; `message` is
// the HIP error in words, NUL-terminated.
struct Status {
    int code = 0;
    char message[200] = {};
};

// On HIP device `device`: the fill pattern of `seed` over the `bytes` bytes at device
// pointer `address` (rig/gpu/pattern.hpp), and their checksum. Synchronous.
Status fill(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t seed);
Status checksum(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t* checksum);

}  // namespace rig::gpu::hip::kernels

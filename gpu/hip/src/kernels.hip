// Fill and checksum on an AMD GPU (kernels.hpp). Debian's ROCm 5.2 has no rocThrust, so
// the kernels are written out: a grid-stride loop over the range's words, an aligned
// whole word as one 8-byte access and the range's unaligned ends byte by byte
// (rig/gpu/pattern.hpp); the checksum sums each block's terms in shared memory and adds
// the block's sum to one 64-bit total with atomicAdd, whose order does not matter.
#include "kernels.hpp"

#include <hip/hip_runtime.h>

#include <cstdio>

#include "rig/gpu/pattern.hpp"

namespace rig::gpu::hip::kernels {
namespace {

namespace pattern = rig::gpu::pattern;

constexpr unsigned threads = 256;  // per block: a multiple of the wavefront (64)
constexpr unsigned max_blocks = 4096;

__global__ void fill_words(unsigned char* first, std::uint64_t bytes, std::uint64_t seed) {
    const std::uint64_t words = pattern::words(bytes);
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < words;
         i += std::uint64_t{gridDim.x} * blockDim.x) {
        const std::uint64_t word = pattern::fill_word(seed, i);
        unsigned char* at = first + i * 8;
        if (i * 8 + 8 <= bytes && reinterpret_cast<std::uintptr_t>(at) % 8 == 0)
            *reinterpret_cast<std::uint64_t*>(at) = word;
        else pattern::store_word(first, bytes, i, word);
    }
}

__global__ void sum_terms(const unsigned char* first, std::uint64_t bytes, unsigned long long* total) {
    __shared__ std::uint64_t partial[threads];
    const std::uint64_t words = pattern::words(bytes);
    std::uint64_t sum = 0;
    for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < words;
         i += std::uint64_t{gridDim.x} * blockDim.x) {
        const unsigned char* at = first + i * 8;
        const std::uint64_t word = i * 8 + 8 <= bytes && reinterpret_cast<std::uintptr_t>(at) % 8 == 0
                                       ? *reinterpret_cast<const std::uint64_t*>(at)
                                       : pattern::load_word(first, bytes, i);
        sum += pattern::term(word, i);
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = threads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, static_cast<unsigned long long>(partial[0]));
}

Status status(hipError_t code) {
    Status s;
    s.code = static_cast<int>(code);
    std::snprintf(s.message, sizeof s.message, "%s (%s)", hipGetErrorName(code), hipGetErrorString(code));
    return s;
}

unsigned blocks(std::uint64_t bytes) {
    const std::uint64_t needed = (pattern::words(bytes) + threads - 1) / threads;
    return static_cast<unsigned>(needed < max_blocks ? (needed == 0 ? 1 : needed) : max_blocks);
}

}  // namespace

Status fill(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t seed) {
    if (hipError_t e = hipSetDevice(device); e != hipSuccess) return status(e);
    hipLaunchKernelGGL(fill_words, dim3(blocks(bytes)), dim3(threads), 0, nullptr,
                       reinterpret_cast<unsigned char*>(address), bytes, seed);
    if (hipError_t e = hipGetLastError(); e != hipSuccess) return status(e);
    if (hipError_t e = hipDeviceSynchronize(); e != hipSuccess) return status(e);
    return {};
}

Status checksum(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t* checksum) {
    if (hipError_t e = hipSetDevice(device); e != hipSuccess) return status(e);
    unsigned long long* total = nullptr;
    if (hipError_t e = hipMalloc(&total, sizeof *total); e != hipSuccess) return status(e);
    Status result;
    unsigned long long sum = 0;
    if (hipError_t e = hipMemset(total, 0, sizeof *total); e != hipSuccess) {
        result = status(e);
    } else {
        hipLaunchKernelGGL(sum_terms, dim3(blocks(bytes)), dim3(threads), 0, nullptr,
                           reinterpret_cast<const unsigned char*>(address), bytes, total);
        if (hipError_t e2 = hipGetLastError(); e2 != hipSuccess) result = status(e2);
        else if (hipError_t e3 = hipMemcpy(&sum, total, sizeof sum, hipMemcpyDeviceToHost); e3 != hipSuccess)
            result = status(e3);
    }
    (void)hipFree(total);
    if (result.code == 0) *checksum = pattern::finish(sum, bytes);
    return result;
}

}  // namespace rig::gpu::hip::kernels

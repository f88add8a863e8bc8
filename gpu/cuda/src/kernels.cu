// Fill and checksum on an NVIDIA GPU (kernels.hpp), with Thrust: one thread per word of
// the range, an aligned whole word as one 8-byte access, the range's unaligned ends byte
// by byte (rig/gpu/pattern.hpp). The checksum is a transform-reduce of the words' terms,
// whose sum is independent of the order Thrust adds them in. Thrust reports failures by
// exception; they end here and leave as a Status.
#include "kernels.hpp"

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system/cuda/error.h>
#include <thrust/transform_reduce.h>

#include <cstdio>
#include <exception>
#include <new>

#include "rig/gpu/pattern.hpp"

namespace rig::gpu::cuda::kernels {
namespace {

namespace pattern = rig::gpu::pattern;

struct FillWord {
    unsigned char* first;
    std::uint64_t bytes;
    std::uint64_t seed;
    __device__ void operator()(std::uint64_t index) const {
        const std::uint64_t word = pattern::fill_word(seed, index);
        unsigned char* at = first + index * 8;
        if (index * 8 + 8 <= bytes && reinterpret_cast<std::uintptr_t>(at) % 8 == 0)
            *reinterpret_cast<std::uint64_t*>(at) = word;
        else pattern::store_word(first, bytes, index, word);
    }
};

struct Term {
    const unsigned char* first;
    std::uint64_t bytes;
    __device__ std::uint64_t operator()(std::uint64_t index) const {
        const unsigned char* at = first + index * 8;
        const std::uint64_t word = index * 8 + 8 <= bytes && reinterpret_cast<std::uintptr_t>(at) % 8 == 0
                                       ? *reinterpret_cast<const std::uint64_t*>(at)
                                       : pattern::load_word(first, bytes, index);
        return pattern::term(word, index);
    }
};

Status status(cudaError_t code) {
    Status s;
    s.code = static_cast<int>(code);
    std::snprintf(s.message, sizeof s.message, "%s (%s)", cudaGetErrorName(code), cudaGetErrorString(code));
    return s;
}

Status thrown(int code, const char* what) {
    Status s;
    s.code = code;
    std::snprintf(s.message, sizeof s.message, "%s", what);
    return s;
}

// Runs `work` on `device` and waits for it, turning every failure into a Status.
template <class Work>
Status run(int device, Work work) {
    try {
        if (const cudaError_t code = cudaSetDevice(device); code != cudaSuccess) return status(code);
        work();
        if (const cudaError_t code = cudaDeviceSynchronize(); code != cudaSuccess) return status(code);
        return {};
    } catch (const thrust::system_error& e) {
        return thrown(e.code().value() != 0 ? e.code().value() : -1, e.what());
    } catch (const std::bad_alloc& e) {
        return thrown(static_cast<int>(cudaErrorMemoryAllocation), e.what());
    } catch (const std::exception& e) {
        return thrown(-1, e.what());
    }
}

}  // namespace

Status fill(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t seed) {
    return run(device, [&] {
        const FillWord op{reinterpret_cast<unsigned char*>(address), bytes, seed};
        thrust::for_each(thrust::device, thrust::counting_iterator<std::uint64_t>(0),
                         thrust::counting_iterator<std::uint64_t>(pattern::words(bytes)), op);
    });
}

Status checksum(int device, std::uint64_t address, std::uint64_t bytes, std::uint64_t* checksum) {
    return run(device, [&] {
        const Term op{reinterpret_cast<const unsigned char*>(address), bytes};
        const std::uint64_t sum =
            thrust::transform_reduce(thrust::device, thrust::counting_iterator<std::uint64_t>(0),
                                     thrust::counting_iterator<std::uint64_t>(pattern::words(bytes)), op,
                                     std::uint64_t{0}, thrust::plus<std::uint64_t>());
        *checksum = pattern::finish(sum, bytes);
    });
}

}  // namespace rig::gpu::cuda::kernels

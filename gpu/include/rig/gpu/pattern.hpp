// rig/gpu/pattern.hpp: the fill pattern and the checksum every GPU backend computes on
// its GPU, and the host's reference computation they are tested against.
//
// A byte range of n bytes is read as w = ceil(n / 8) words: word i is bytes 8i .. 8i+7 of
// the range, little-endian, the bytes past n taken as 0. Indices count from the first
// byte of the range, wherever it lies in memory, so that a range copied elsewhere (to
// another GPU, to another offset) keeps its checksum.
//
//  - fill(seed): word i is fill_word(seed, i) = mix(seed + (i + 1) * golden), the i-th
//    output of SplitMix64 started at `seed` (Steele, Lea, Flood: "Fast splittable
//    pseudorandom number generators", OOPSLA 2014); the last word is cut at n.
//  - checksum: finish(sum over i of term(word i, i), n), the sum taken modulo 2^64, where
//    term(w, i) = mix(w + (i + 1) * K) and finish(s, n) = mix(s ^ n). A sum is
//    independent of the order in which a GPU's threads add their terms, and each term
//    depends on the word's index, so that swapped or shifted words change it.
//
// This header is plain C++20 with no library dependence: the CUDA and HIP kernel files
// include it (through their boundary headers) so that device and host compute the same
// function from the same source. `RIG_GPU_HOST_DEVICE` marks the functions for both.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIP__)
#define RIG_GPU_HOST_DEVICE __host__ __device__
#else
#define RIG_GPU_HOST_DEVICE
#endif

namespace rig::gpu::pattern {

inline constexpr std::uint64_t golden = 0x9e3779b97f4a7c15;  // SplitMix64's increment
inline constexpr std::uint64_t term_key = 0xd1b54a32d192ed03;

// SplitMix64's finalizer: a bijection of 64-bit words that mixes every input bit into
// every output bit.
RIG_GPU_HOST_DEVICE constexpr std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
}

// Word `index` of the fill pattern for `seed`.
RIG_GPU_HOST_DEVICE constexpr std::uint64_t fill_word(std::uint64_t seed, std::uint64_t index) {
    return mix(seed + (index + 1) * golden);
}

// What word `index` of a range, holding `word`, adds to the checksum's sum.
RIG_GPU_HOST_DEVICE constexpr std::uint64_t term(std::uint64_t word, std::uint64_t index) {
    return mix(word + (index + 1) * term_key);
}

// The checksum of a range of `bytes` bytes whose terms sum to `sum`.
RIG_GPU_HOST_DEVICE constexpr std::uint64_t finish(std::uint64_t sum, std::uint64_t bytes) { return mix(sum ^ bytes); }

// The number of words of a range of `bytes` bytes.
RIG_GPU_HOST_DEVICE constexpr std::uint64_t words(std::uint64_t bytes) { return (bytes + 7) / 8; }

// Word `index` of the `bytes`-byte range at `first`, read byte by byte (little-endian,
// zeros past the end): the host's way and a kernel's way for a word that is not aligned.
RIG_GPU_HOST_DEVICE inline std::uint64_t load_word(const unsigned char* first, std::uint64_t bytes,
                                                   std::uint64_t index) {
    std::uint64_t word = 0;
    for (std::uint64_t i = 0; i < 8 && index * 8 + i < bytes; ++i)
        word |= std::uint64_t{first[index * 8 + i]} << (8 * i);
    return word;
}

// Writes word `index` of the `bytes`-byte range at `first`, cut at the range's end.
RIG_GPU_HOST_DEVICE inline void store_word(unsigned char* first, std::uint64_t bytes, std::uint64_t index,
                                           std::uint64_t word) {
    for (std::uint64_t i = 0; i < 8 && index * 8 + i < bytes; ++i)
        first[index * 8 + i] = static_cast<unsigned char>(word >> (8 * i));
}

// Pinned to SplitMix64's published first outputs for seed 0 (the reference splitmix64.c
// of Vigna's xoshiro page gives 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f).
static_assert(fill_word(0, 0) == 0xe220a8397b1dcdaf);
static_assert(fill_word(0, 1) == 0x6e789e6aa1b965f4);
static_assert(fill_word(0, 2) == 0x06c45d188009454f);
static_assert(mix(0) == 0 && finish(0, 0) == 0);
static_assert(words(0) == 0 && words(1) == 1 && words(8) == 1 && words(9) == 2);

}  // namespace rig::gpu::pattern

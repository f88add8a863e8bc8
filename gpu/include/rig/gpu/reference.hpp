// rig/gpu/reference.hpp: the fill pattern and the checksum of rig/gpu/pattern.hpp,
// computed on the host. Every backend's fill and checksum is tested against these, so
// that the simulated, CUDA and HIP GPUs agree with one computation.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rig::gpu::reference {

// Writes the fill pattern of `seed` over `bytes` (word 0 at bytes[0]).
void fill(std::span<std::byte> bytes, std::uint64_t seed);

// The checksum of `bytes`.
std::uint64_t checksum(std::span<const std::byte> bytes);

// The checksum of `bytes` bytes of the fill pattern of `seed`, without memory for them:
// what checksum gives after fill(seed) of a range of that size.
std::uint64_t fill_checksum(std::uint64_t seed, std::uint64_t bytes);

}  // namespace rig::gpu::reference

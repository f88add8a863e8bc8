// crc32.hpp: the CRC-32 of IEEE 802.3 (the Ethernet FCS): polynomial 0x04C11DB7, bit-
// reflected (0xEDB88320), register preset to all ones and complemented at the end. It is
// the CRC that InfiniBand's ICRC uses (IBA vol. 1 §7.8.1; RoCEv2: annex A17.3.3), and
// the one Linux's rxe computes with crc32_le (drivers/infiniband/sw/rxe/rxe_icrc.c); NOT
// CRC-32C (Castagnoli, the SSE4.2 `crc32` instruction's), which iSCSI and NVMe/TCP use.
//
// crc32_update runs on the register itself (preset and final complement left to the
// caller), so that a CRC over pieces is the update of each in turn:
//   crc32(a ++ b) == ~crc32_update(crc32_update(~0u, a), b)
// Where the CPU has VPCLMULQDQ and AVX-512, runs of 512 bytes or more fold 512 bytes per
// step by carry-less multiplication, where it has PCLMULQDQ runs of 64 bytes or more 64
// bytes per step (Gopal et al., "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ Instruction", Intel, 2009); the rest, and CPUs without either, go by the
// eight tables of slice-by-8 (Kounavis and Berry, "A Systematic Approach to Building High
// Performance Software-Based CRC Generators", 2005). All give the same result for every
// input (tested). Thread-safe; allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rig::bnxt::sim::detail {

// How a CRC is computed: slice-by-8 tables; 128-bit PCLMULQDQ; 512-bit VPCLMULQDQ.
enum class Crc32Path { tables, pclmulqdq, vpclmulqdq };
// The fastest this CPU has, which crc32_update uses.
Crc32Path crc32_best();

std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::byte> bytes);
inline std::uint32_t crc32(std::span<const std::byte> bytes) { return ~crc32_update(~0u, bytes); }
// By `path`, which must not be faster than crc32_best() (the CPU would fault).
std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::byte> bytes, Crc32Path path);

}  // namespace rig::bnxt::sim::detail

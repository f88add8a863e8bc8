// crc32.hpp: the CRC-32 of IEEE 802.3 (the Ethernet FCS): polynomial 0x04C11DB7, bit-
// reflected (0xEDB88320), register preset to all ones and complemented at the end. It is
// the CRC that InfiniBand's ICRC uses (IBA vol. 1 §7.8.1; RoCEv2: annex A17.3.3), and
// the one Linux's rxe computes with crc32_le (drivers/infiniband/sw/rxe/rxe_icrc.c); NOT
// CRC-32C (Castagnoli, the SSE4.2 `crc32` instruction's), which iSCSI and NVMe/TCP use.
//
// crc32_update runs on the register itself (preset and final complement left to the
// caller), so that a CRC over pieces is the update of each in turn:
//   crc32(a ++ b) == ~crc32_update(crc32_update(~0u, a), b)
// Where the CPU has PCLMULQDQ, runs of 64 bytes or more fold 64 bytes per step by carry-
// less multiplication (Gopal et al., "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ Instruction", Intel, 2009); the rest, and CPUs without it, go by the eight
// tables of slice-by-8 (Kounavis and Berry, "A Systematic Approach to Building High
// Performance Software-Based CRC Generators", 2005). Both give the same result for every
// input (tested). Thread-safe; allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rig::bnxt::sim::detail {

std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::byte> bytes);
inline std::uint32_t crc32(std::span<const std::byte> bytes) { return ~crc32_update(~0u, bytes); }

// The table-driven path alone, for tests to compare the folding one against.
std::uint32_t crc32_update_tables(std::uint32_t reg, std::span<const std::byte> bytes);
// Whether crc32_update folds with PCLMULQDQ on this CPU.
bool crc32_folds();

}  // namespace rig::bnxt::sim::detail

// rig/bnxt/sim/testing/frames.hpp: test-only views of the bnxt model's framing (the model's
// packet.hpp and crc32.hpp, which are private): the ICRC it writes into and checks on a
// frame, and the CRC-32 it is made of. Only tests link rig_bnxt_sim_testing. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rig::bnxt::sim::testing {

// The ICRC of a RoCE frame (RoCEv2 over IPv4 or IPv6, or RoCEv1) as the model computes it
// (IBA §7.8.1, annex A17.3.3): its last four bytes are the ICRC's place and not read. The
// frame carries it least significant byte first. nullopt for a frame shorter than its
// headers and the ICRC, or of another EtherType.
std::optional<std::uint32_t> icrc(std::span<const std::byte> frame);

// The Ethernet CRC-32 (IEEE 802.3) as the model computes it: by the fastest path this CPU
// has; by one path (slice-by-8 tables, 128-bit PCLMULQDQ, 512-bit VPCLMULQDQ), nullopt
// where this CPU lacks it; and this CPU's fastest path.
enum class Crc32Path { tables, pclmulqdq, vpclmulqdq };
std::uint32_t crc32(std::span<const std::byte> bytes);
std::optional<std::uint32_t> crc32(std::span<const std::byte> bytes, Crc32Path path);
Crc32Path crc32_best();

}  // namespace rig::bnxt::sim::testing

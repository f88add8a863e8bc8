// rig/bnxt/detail/work_request.hpp (internal: not installed, rig_bnxt_internal): the bytes of the WQEs and PSN search entries the driver
// posts (docs/hsi.md §5.2-§5.4), built from the hsi/ layouts. Inline, for the hot path:
// a post builds its WQE in a local buffer and writes the slots it uses in one copy.
// Tests reach it through rig_bnxt_internal to compare the bytes with WQEs assembled by
// hand from the spec tables.
//
// Every builder zeroes the 32 header bytes (§5.2.5 step 2) and returns the bytes the WQE
// uses, wqe_size × 16; the rest of the 128-byte static-mode WQE is don't-care (§5.1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "rig/bnxt/hsi/pbl.hpp"
#include "rig/bnxt/hsi/wqe.hpp"
#include "rig/little_endian.hpp"

namespace rig::bnxt::detail {

using WqeBytes = std::span<std::byte, hsi::wqe::bytes>;

// One scatter/gather element: `size` bytes at `va` of the region of `lkey` (§5.2.3).
struct SgeRef {
    std::uint64_t va = 0;
    std::uint32_t lkey = 0;
    std::uint32_t size = 0;
};

inline void put_sge(WqeBytes wqe, std::size_t slot, const SgeRef& sge) {
    hsi::Sge s{};
    s.va_or_pa = sge.va;
    s.l_key = sge.lkey;
    s.size = sge.size;
    std::memcpy(wqe.data() + slot * hsi::slot_bytes, &s, sizeof s);
}

inline std::uint8_t send_flags(bool signalled, bool inline_data, bool solicited = false) {
    return static_cast<std::uint8_t>(hsi::wqe_flags::SIGNAL_COMP(signalled ? 1 : 0) |
                                     hsi::wqe_flags::INLINE(inline_data ? 1 : 0) |
                                     hsi::wqe_flags::SE(solicited ? 1 : 0));
}

// SEND (or SEND_WITH_IMMEDIATE with `immediate`) of one SGE; none when sge.size is 0.
// `solicited`: the SE flag, which the peer's receive completion carries (§5.2).
inline std::size_t encode_send(WqeBytes wqe, bool signalled, std::optional<std::uint32_t> immediate, const SgeRef& sge,
                               bool solicited = false) {
    const std::size_t sges = sge.size == 0 ? 0 : 1;
    hsi::SqSendWqe h{};
    h.wqe_type = static_cast<std::uint8_t>(immediate ? hsi::WqeType::SEND_WITH_IMMEDIATE : hsi::WqeType::SEND);
    h.flags = send_flags(signalled, false, solicited);
    h.wqe_size = hsi::wqe_size_sges(sges);
    h.inv_key_or_imm_data = immediate.value_or(0);
    h.length = sge.size;
    std::memcpy(wqe.data(), &h, sizeof h);
    if (sges != 0) put_sge(wqe, hsi::wqe::header_slots, sge);
    return h.wqe_size * hsi::slot_bytes;
}

// SEND with INLINE: `data` (at most 96 bytes) copied into the WQE from byte 32 (§5.2.4).
inline std::size_t encode_send_inline(WqeBytes wqe, bool signalled, std::optional<std::uint32_t> immediate,
                                      std::span<const std::byte> data, bool solicited = false) {
    hsi::SqSendWqe h{};
    h.wqe_type = static_cast<std::uint8_t>(immediate ? hsi::WqeType::SEND_WITH_IMMEDIATE : hsi::WqeType::SEND);
    h.flags = send_flags(signalled, true, solicited);
    h.wqe_size = hsi::wqe_size_inline(data.size());
    h.inv_key_or_imm_data = immediate.value_or(0);
    h.length = static_cast<std::uint32_t>(data.size());
    std::memcpy(wqe.data(), &h, sizeof h);
    const std::size_t used = h.wqe_size * hsi::slot_bytes;
    std::byte* payload = wqe.data() + hsi::wqe::header_bytes;
    if (!data.empty()) std::memcpy(payload, data.data(), data.size());
    // The tail of the last slot is zero, so a WQE's bytes depend on its request alone.
    std::memset(payload + data.size(), 0, used - hsi::wqe::header_bytes - data.size());
    return used;
}

// RDMA_READ of sge.size bytes at (remote_va, rkey) into the SGE (§5.2.2).
inline std::size_t encode_read(WqeBytes wqe, bool signalled, std::uint64_t remote_va, std::uint32_t rkey,
                               const SgeRef& sge) {
    const std::size_t sges = sge.size == 0 ? 0 : 1;
    hsi::SqRdmaWqe h{};
    h.wqe_type = static_cast<std::uint8_t>(hsi::WqeType::RDMA_READ);
    h.flags = send_flags(signalled, false);
    h.wqe_size = hsi::wqe_size_sges(sges);
    h.length = sge.size;
    h.remote_va = remote_va;
    h.remote_key = rkey;
    std::memcpy(wqe.data(), &h, sizeof h);
    if (sges != 0) put_sge(wqe, hsi::wqe::header_slots, sge);
    return h.wqe_size * hsi::slot_bytes;
}

// RECV into one SGE, carrying `tag` (20 bits) back in the responder CQE (§5.3). A receive
// of 0 bytes carries one zero-length SGE and counts it (wqe_size 3).
inline std::size_t encode_recv(WqeBytes wqe, std::uint32_t tag, const SgeRef& sge) {
    hsi::RqWqe h{};
    h.wqe_type = static_cast<std::uint8_t>(hsi::WqeType::RECV);
    h.wqe_size = hsi::wqe_size_sges(1);
    h.wr_id[0] = static_cast<std::uint32_t>(hsi::rq_wqe::wr_id(tag));
    std::memcpy(wqe.data(), &h, sizeof h);
    put_sge(wqe, hsi::wqe::header_slots, sge);
    return h.wqe_size * hsi::slot_bytes;
}

// The PSN search entry of a WQE (§5.4): its type and first PSN, the PSN after it, its
// first slot (8 × its index in static mode, kept to 16 bits).
inline void encode_psn(std::span<std::byte, hsi::psn_search::entry_bytes> entry, hsi::WqeType type,
                       std::uint32_t start_psn, std::uint32_t next_psn, std::uint32_t wqe_index) {
    hsi::SqPsnSearchExt p{};
    p.opcode_start_psn = static_cast<std::uint32_t>(hsi::psn_search::start_psn(start_psn) |
                                                    hsi::psn_search::opcode(static_cast<std::uint8_t>(type)));
    p.flags_next_psn = static_cast<std::uint32_t>(hsi::psn_search::next_psn(next_psn));
    p.start_slot_idx = static_cast<std::uint16_t>(wqe_index * hsi::wqe::slots);
    std::memcpy(entry.data(), &p, sizeof p);
}

}  // namespace rig::bnxt::detail

// rig/bnxt/hsi/wqe.hpp: send and receive queue entries in static WQE mode, the mode of P5
// (docs/hsi.md §5.1-§5.4). Every WQE takes 8 slots (128 bytes): 32 header bytes, then
// up to 6 SGEs of 16 bytes or up to 96 bytes of inline data. After the SQ's WQE ring comes
// one 16-byte PSN search entry per WQE (§5.4). Layouts and codes only: no state.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "rig/little_endian.hpp"

namespace rig::bnxt::hsi {

using rig::little_endian::Field;
using rig::little_endian::Le16;
using rig::little_endian::Le32;
using rig::little_endian::Le64;

// §5.1: static mode geometry.
namespace wqe {
inline constexpr std::size_t bytes = 128;        // one WQE
inline constexpr std::size_t slots = 8;          // 16-byte slots per WQE
inline constexpr std::size_t header_bytes = 32;  // the 2 header slots
inline constexpr std::size_t header_slots = 2;
inline constexpr std::size_t max_sges = 6;  // 2 header slots + 6 SGE slots
inline constexpr std::size_t max_inline_bytes = 96;
}  // namespace wqe

// §5.2 wqe_type.
enum class WqeType : std::uint8_t {
    SEND = 0x00,
    SEND_WITH_IMMEDIATE = 0x01,
    SEND_WITH_INVALIDATE = 0x02,
    RDMA_WRITE = 0x04,
    RDMA_WRITE_WITH_IMMEDIATE = 0x05,
    RDMA_READ = 0x06,
    ATOMIC_CMP_AND_SWAP = 0x08,
    ATOMIC_FETCH_AND_ADD = 0x0B,
    LOCAL_INVALIDATE = 0x0C,
    FAST_REGISTER = 0x0D,  // FR_PMR
    BIND = 0x0E,
    FR_PPMR = 0x0F,
    RECV = 0x80,  // RQ/SRQ only
};

// §5.2 flags (byte 1 of a send WQE).
namespace wqe_flags {
inline constexpr Field<0, 1> SIGNAL_COMP;
inline constexpr Field<1, 1> RD_OR_ATOMIC_FENCE;
inline constexpr Field<2, 1> UC_FENCE;
inline constexpr Field<3, 1> SE;  // solicited event
inline constexpr Field<4, 1> INLINE;
inline constexpr Field<5, 1> WQE_TS_EN;
inline constexpr Field<6, 1> DEBUG_TRACE;
}  // namespace wqe_flags

// §5.2, §5.2.1: the 32-byte header of SEND, SEND_WITH_IMMEDIATE, SEND_WITH_INVALIDATE.
struct SqSendWqe {
    std::uint8_t wqe_type;  // WqeType
    std::uint8_t flags;     // wqe_flags
    std::uint8_t wqe_size;  // slots used: 2 + SGEs, or 2 + ceil(inline bytes / 16)
    std::uint8_t reserved_3;
    Le32 inv_key_or_imm_data;                 // immediate (numeric value, little-endian) or the R_Key to invalidate
    Le32 length;                              // payload bytes: sum of SGE sizes, or the inline length
    Le32 q_key;                               // UD only; 0 for RC
    Le32 dst_qp;                              // UD only: bits 23:0; 0 for RC
    Le32 avid;                                // UD only: bits 19:0; 0 for RC
    std::array<std::uint8_t, 8> reserved_24;  // newer: timestamp @28
};
static_assert(sizeof(SqSendWqe) == 32);
static_assert(offsetof(SqSendWqe, wqe_type) == 0 && offsetof(SqSendWqe, flags) == 1);
static_assert(offsetof(SqSendWqe, wqe_size) == 2 && offsetof(SqSendWqe, inv_key_or_imm_data) == 4);
static_assert(offsetof(SqSendWqe, length) == 8 && offsetof(SqSendWqe, q_key) == 12);
static_assert(offsetof(SqSendWqe, dst_qp) == 16 && offsetof(SqSendWqe, avid) == 20);
static_assert(std::has_unique_object_representations_v<SqSendWqe>);

// §5.2, §5.2.2: the 32-byte header of RDMA_WRITE, RDMA_WRITE_WITH_IMMEDIATE, RDMA_READ.
struct SqRdmaWqe {
    std::uint8_t wqe_type;
    std::uint8_t flags;
    std::uint8_t wqe_size;
    std::uint8_t reserved_3;
    Le32 imm_data;  // WRITE_WITH_IMMEDIATE; 0 otherwise
    Le32 length;    // local payload bytes
    Le32 reserved_12;
    Le64 remote_va;                           // in the remote MR's address space
    Le32 remote_key;                          // R_Key
    std::array<std::uint8_t, 4> reserved_28;  // newer: timestamp
};
static_assert(sizeof(SqRdmaWqe) == 32);
static_assert(offsetof(SqRdmaWqe, wqe_type) == 0 && offsetof(SqRdmaWqe, flags) == 1);
static_assert(offsetof(SqRdmaWqe, wqe_size) == 2 && offsetof(SqRdmaWqe, imm_data) == 4);
static_assert(offsetof(SqRdmaWqe, length) == 8 && offsetof(SqRdmaWqe, remote_va) == 16);
static_assert(offsetof(SqRdmaWqe, remote_key) == 24);
static_assert(std::has_unique_object_representations_v<SqRdmaWqe>);

// §5.2.3: a scatter/gather element.
struct Sge {
    Le64 va_or_pa;  // address in the local MR's address space
    Le32 l_key;     // reserved_lkey: bus address, with RESERVED_LKEY_ENABLE [UNCERTAIN]
    Le32 size;      // bytes
};
static_assert(sizeof(Sge) == 16);
static_assert(offsetof(Sge, va_or_pa) == 0 && offsetof(Sge, l_key) == 8 && offsetof(Sge, size) == 12);
static_assert(std::has_unique_object_representations_v<Sge>);

// §5.3: the 32-byte header of an RQ WQE (wqe_type RECV), then wqe_size - 2 SGEs.
struct RqWqe {
    std::uint8_t wqe_type;  // WqeType::RECV
    std::uint8_t flags;     // 0
    std::uint8_t wqe_size;  // 2 + SGEs; no SGE: one zero-length SGE, wqe_size 3
    std::uint8_t reserved_3;
    std::array<std::uint8_t, 4> reserved_4;
    std::array<Le32, 2> wr_id;  // wr_id[0] bits 19:0: the tag of the responder CQE; wr_id[1] reserved
    std::array<std::uint8_t, 16> reserved_16;
};
static_assert(sizeof(RqWqe) == 32);
static_assert(offsetof(RqWqe, wqe_type) == 0 && offsetof(RqWqe, flags) == 1);
static_assert(offsetof(RqWqe, wqe_size) == 2 && offsetof(RqWqe, wr_id) == 8);
static_assert(std::has_unique_object_representations_v<RqWqe>);

namespace rq_wqe {
inline constexpr Field<0, 20> wr_id;  // of wr_id[0]: srq_or_rq_wr_id of the responder CQE
}

// §5.4: `sq_psn_search_ext`, the P5 PSN search entry (E = 16 bytes).
struct SqPsnSearchExt {
    Le32 opcode_start_psn;  // psn_search::start_psn, psn_search::opcode (= wqe_type)
    Le32 flags_next_psn;    // psn_search::next_psn, psn_search::flags (0)
    Le16 start_slot_idx;    // static mode: 8 x WQE index
    std::array<std::uint8_t, 6> reserved_10;
};
static_assert(sizeof(SqPsnSearchExt) == 16);
static_assert(offsetof(SqPsnSearchExt, opcode_start_psn) == 0 && offsetof(SqPsnSearchExt, flags_next_psn) == 4);
static_assert(offsetof(SqPsnSearchExt, start_slot_idx) == 8);
static_assert(std::has_unique_object_representations_v<SqPsnSearchExt>);

namespace psn_search {
inline constexpr Field<0, 24> start_psn;
inline constexpr Field<24, 8> opcode;
inline constexpr Field<0, 24> next_psn;
inline constexpr Field<24, 8> flags;
inline constexpr std::size_t entry_bytes = 16;
}  // namespace psn_search

// PSNs are 24 bits (§5.2.5).
inline constexpr std::uint32_t psn_mask = 0xFFFFFF;

// §5.2: wqe_size of a WQE with `sges` SGEs, and of one with `inline_bytes` inline bytes.
constexpr std::uint8_t wqe_size_sges(std::size_t sges) { return static_cast<std::uint8_t>(wqe::header_slots + sges); }
constexpr std::uint8_t wqe_size_inline(std::size_t inline_bytes) {
    return static_cast<std::uint8_t>(wqe::header_slots + (inline_bytes + 15) / 16);
}
static_assert(wqe_size_sges(1) == 3 && wqe_size_inline(96) == 8 && wqe_size_inline(48) == 5);  // B23: 16-byte units
static_assert(wqe_size_inline(1) == 3 && wqe_size_inline(0) == 2);

// §5.4: the byte offset in SQ memory of PSN search entry k (static mode).
constexpr std::uint64_t psn_search_offset(std::uint32_t sq_size, std::uint32_t k) {
    return std::uint64_t{sq_size} * wqe::slots * 16 + std::uint64_t{k} * psn_search::entry_bytes;
}
static_assert(psn_search_offset(64, 0) == 8192 && psn_search_offset(64, 3) == 8192 + 48);

// §5.2.5: packets of a message: ceil(length / path MTU), at least 1. Every path MTU is a
// power of two (256 to 4096, IBA 9.7.2), so the division is a shift (a post counts these).
constexpr std::uint32_t npkts(std::uint64_t length, std::uint32_t path_mtu_bytes) {
    return length == 0 ? 1 : static_cast<std::uint32_t>(((length - 1) >> std::countr_zero(path_mtu_bytes)) + 1);
}
static_assert(npkts(0, 1024) == 1 && npkts(1024, 1024) == 1 && npkts(1025, 1024) == 2 && npkts(1, 256) == 1 &&
              npkts(0xFFFFFFFF, 4096) == 0x100000);

}  // namespace rig::bnxt::hsi

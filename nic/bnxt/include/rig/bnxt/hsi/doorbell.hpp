// rig/bnxt/hsi/doorbell.hpp: the 64-bit doorbell (docs/hsi.md §5.8), one 8-byte
// little-endian store into the doorbell page of BAR2 (bar2::doorbell_page_pf). The value
// carries the queue (xid), its type and an index; `epoch` is the wrap parity of that index
// (§5.8.2): producers flip it each time their index wraps to 0, CQ/NQ/CREQ consumers too,
// so for a consumer it is the inverse of the phase it expects (phase 1 <-> epoch 0).
#pragma once

#include <cstdint>

#include "rig/little_endian.hpp"

namespace rig::bnxt::hsi {

using rig::little_endian::Field;

// §5.8.1: the fields of the 64-bit value.
namespace db {
inline constexpr Field<0, 24> index;        // producer or consumer index (table below)
inline constexpr Field<24, 1> epoch;        // wrap parity, §5.8.2 ([CORRECTED] not the phase)
inline constexpr Field<25, 2> toggle;       // [P7] CQ arm toggle; 0 on P5
inline constexpr Field<32, 20> xid;         // QP number, CQ id, SRQ id or NQ/CREQ ring id
inline constexpr Field<56, 2> path;         // DbPath
inline constexpr Field<58, 1> valid;        // must be 1 (§8.2: whether P5 requires it [UNCERTAIN])
inline constexpr Field<59, 1> debug_trace;  // 0
inline constexpr Field<60, 4> type;         // DbType
}  // namespace db

// §5.8.1 types. 0xF (NULL, ignored) is not named: NULL is a macro.
enum class DbType : std::uint8_t {
    SQ = 0x0,  // xid QP; index: SQ producer (next free WQE) mod sq_size
    RQ = 0x1,  // xid QP; index: RQ producer mod rq_size
    SRQ = 0x2,
    SRQ_ARM = 0x3,
    CQ = 0x4,         // xid CQ; index: consumer (next CQE to read); releases, no arm
    CQ_ARMSE = 0x5,   // consumer; arm for the next solicited or error CQE
    CQ_ARMALL = 0x6,  // consumer; arm for the next CQE
    CQ_ARMENA = 0x7,  // index 0, epoch 0; enables arming (privileged page)
    SRQ_ARMENA = 0x8,
    CQ_CUTOFF_ACK = 0x9,
    NQ = 0xA,          // xid NQ/CREQ ring id; consumer; no arm
    NQ_ARM = 0xB,      // consumer; arm the interrupt
    PUSH_START = 0xC,  // push mode, not used
    PUSH_END = 0xD,
};

enum class DbPath : std::uint8_t { ROCE = 0, L2 = 1, ENGINE = 2 };

// The doorbell value for queue `xid` of `type`, path RoCE, valid set.
constexpr std::uint64_t encode(DbType type, std::uint32_t xid, std::uint32_t index, std::uint32_t epoch) {
    return db::index(index) | db::epoch(epoch) | db::xid(xid) | db::path(static_cast<std::uint8_t>(DbPath::ROCE)) |
           db::valid(1) | db::type(static_cast<std::uint8_t>(type));
}

// A doorbell value taken apart.
struct Doorbell {
    DbType type;
    DbPath path;
    std::uint32_t xid;
    std::uint32_t index;
    std::uint8_t epoch;
    std::uint8_t toggle;
    bool valid;
};

constexpr Doorbell decode(std::uint64_t value) {
    return Doorbell{static_cast<DbType>(db::type.of(value)),
                    static_cast<DbPath>(db::path.of(value)),
                    static_cast<std::uint32_t>(db::xid.of(value)),
                    static_cast<std::uint32_t>(db::index.of(value)),
                    static_cast<std::uint8_t>(db::epoch.of(value)),
                    static_cast<std::uint8_t>(db::toggle.of(value)),
                    db::valid.of(value) != 0};
}

// docs/design.md's example: SQ of QP 7, producer 5, first pass.
static_assert(encode(DbType::SQ, /*xid*/ 7, /*index*/ 5, /*epoch*/ 0) == 0x0400'0007'0000'0005);
// §7.3 step 6: CQ 3 consumer 0 after one wrap (expected phase 0, epoch 1): word 0 =
// 0 | 1 << 24, word 1 = 3 | 1 << 26 | 0x4 << 28.
static_assert(encode(DbType::CQ, 3, 0, 1) == 0x4400'0003'0100'0000);
static_assert(encode(DbType::NQ_ARM, 0x21, 17, 0) == 0xB400'0021'0000'0011);
static_assert(decode(0xB400'0021'0000'0011).type == DbType::NQ_ARM && decode(0xB400'0021'0000'0011).xid == 0x21);

}  // namespace rig::bnxt::hsi

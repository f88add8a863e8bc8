// rig/bnxt/hsi/cqe.hpp: completion queue entries and notification queue entries
// (docs/hsi.md §5.5, §5.6). CQEs are 32 bytes with the toggle (phase) bit in byte 24;
// NQ entries are 16 bytes with the phase bit V in byte 8. A consumer reads the phase byte,
// fences, then the rest; a producer writes the rest, then the phase byte. Layouts, codes
// and their names only: no state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "rig/little_endian.hpp"

namespace rig::bnxt::hsi {

using rig::little_endian::Field;
using rig::little_endian::Le16;
using rig::little_endian::Le32;
using rig::little_endian::Le64;

// §5.5: CQE geometry and the trailer byte 24, `cqe_type_toggle`.
namespace cqe {
inline constexpr std::size_t bytes = 32;
inline constexpr std::size_t toggle_offset = 24;  // the byte a producer writes last
inline constexpr Field<0, 1> toggle;              // the phase bit (§0)
inline constexpr Field<1, 4> cqe_type;            // CqeType
inline constexpr Field<5, 1> PUSH;                // REQ only
inline constexpr Field<5, 2> resize_toggle;       // CUT_OFF only ([CORRECTED] was bits 7:6)
}  // namespace cqe

enum class CqeType : std::uint8_t {
    REQ = 0x0,
    RES_RC = 0x1,
    RES_UD = 0x2,
    RES_RAWETH_QP1 = 0x3,
    RES_UD_CFA = 0x4,
    NO_OP = 0xD,
    TERMINAL = 0xE,
    CUT_OFF = 0xF,
};

// §5.5.1: requester status.
enum class CqeReqStatus : std::uint8_t {
    OK = 0x0,
    BAD_RESPONSE_ERR = 0x1,
    LOCAL_LENGTH_ERR = 0x2,
    LOCAL_QP_OPERATION_ERR = 0x3,
    LOCAL_PROTECTION_ERR = 0x4,
    MEMORY_MGT_OPERATION_ERR = 0x5,
    REMOTE_INVALID_REQUEST_ERR = 0x6,
    REMOTE_ACCESS_ERR = 0x7,
    REMOTE_OPERATION_ERR = 0x8,
    RNR_NAK_RETRY_CNT_ERR = 0x9,
    TRANSPORT_RETRY_CNT_ERR = 0xA,
    WORK_REQUEST_FLUSHED_ERR = 0xB,
};

constexpr std::string_view name(CqeReqStatus s) {
    switch (s) {
    case CqeReqStatus::OK: return "OK";
    case CqeReqStatus::BAD_RESPONSE_ERR: return "BAD_RESPONSE_ERR";
    case CqeReqStatus::LOCAL_LENGTH_ERR: return "LOCAL_LENGTH_ERR";
    case CqeReqStatus::LOCAL_QP_OPERATION_ERR: return "LOCAL_QP_OPERATION_ERR";
    case CqeReqStatus::LOCAL_PROTECTION_ERR: return "LOCAL_PROTECTION_ERR";
    case CqeReqStatus::MEMORY_MGT_OPERATION_ERR: return "MEMORY_MGT_OPERATION_ERR";
    case CqeReqStatus::REMOTE_INVALID_REQUEST_ERR: return "REMOTE_INVALID_REQUEST_ERR";
    case CqeReqStatus::REMOTE_ACCESS_ERR: return "REMOTE_ACCESS_ERR";
    case CqeReqStatus::REMOTE_OPERATION_ERR: return "REMOTE_OPERATION_ERR";
    case CqeReqStatus::RNR_NAK_RETRY_CNT_ERR: return "RNR_NAK_RETRY_CNT_ERR";
    case CqeReqStatus::TRANSPORT_RETRY_CNT_ERR: return "TRANSPORT_RETRY_CNT_ERR";
    case CqeReqStatus::WORK_REQUEST_FLUSHED_ERR: return "WORK_REQUEST_FLUSHED_ERR";
    }
    return "";
}

// §5.5.2: responder status.
enum class CqeResStatus : std::uint8_t {
    OK = 0x0,
    LOCAL_ACCESS_ERROR = 0x1,
    LOCAL_LENGTH_ERR = 0x2,
    LOCAL_PROTECTION_ERR = 0x3,
    LOCAL_QP_OPERATION_ERR = 0x4,
    MEMORY_MGT_OPERATION_ERR = 0x5,
    REMOTE_INVALID_REQUEST_ERR = 0x6,
    WORK_REQUEST_FLUSHED_ERR = 0x7,
    HW_FLUSH_ERR = 0x8,
};

constexpr std::string_view name(CqeResStatus s) {
    switch (s) {
    case CqeResStatus::OK: return "OK";
    case CqeResStatus::LOCAL_ACCESS_ERROR: return "LOCAL_ACCESS_ERROR";
    case CqeResStatus::LOCAL_LENGTH_ERR: return "LOCAL_LENGTH_ERR";
    case CqeResStatus::LOCAL_PROTECTION_ERR: return "LOCAL_PROTECTION_ERR";
    case CqeResStatus::LOCAL_QP_OPERATION_ERR: return "LOCAL_QP_OPERATION_ERR";
    case CqeResStatus::MEMORY_MGT_OPERATION_ERR: return "MEMORY_MGT_OPERATION_ERR";
    case CqeResStatus::REMOTE_INVALID_REQUEST_ERR: return "REMOTE_INVALID_REQUEST_ERR";
    case CqeResStatus::WORK_REQUEST_FLUSHED_ERR: return "WORK_REQUEST_FLUSHED_ERR";
    case CqeResStatus::HW_FLUSH_ERR: return "HW_FLUSH_ERR";
    }
    return "";
}

// §5.5.1: the requester CQE (type REQ). It completes every WQE from the consumer up to,
// not including, sq_cons_idx.
struct CqeReq {
    Le64 qp_handle;    // from CREATE_QP
    Le16 sq_cons_idx;  // (index of the completed WQE + 1) % sq_size [UNCERTAIN: or 2^16]
    std::array<std::uint8_t, 14> reserved_10;
    std::uint8_t cqe_type_toggle;  // cqe::toggle, cqe::cqe_type, cqe::PUSH
    std::uint8_t status;           // CqeReqStatus
    Le16 reserved_26;
    Le32 reserved_28;
};
static_assert(sizeof(CqeReq) == 32);
static_assert(offsetof(CqeReq, qp_handle) == 0 && offsetof(CqeReq, sq_cons_idx) == 8);
static_assert(offsetof(CqeReq, cqe_type_toggle) == 24 && offsetof(CqeReq, status) == 25);
static_assert(std::has_unique_object_representations_v<CqeReq>);

// §5.5.2: the responder CQE of an RC QP (type RES_RC).
struct CqeResRc {
    Le32 length;                 // bytes received
    Le32 imm_data_or_inv_r_key;  // immediate (as in the WQE) or the invalidated R_Key
    Le64 qp_handle;              // the receiving QP's handle
    Le64 mr_handle;              // with INV: the invalidated MR's handle, else 0
    std::uint8_t cqe_type_toggle;
    std::uint8_t status;   // CqeResStatus
    Le16 flags;            // cqe_res_flags
    Le32 srq_or_rq_wr_id;  // bits 19:0: wr_id[0] tag of the consumed RQ WQE
};
static_assert(sizeof(CqeResRc) == 32);
static_assert(offsetof(CqeResRc, length) == 0 && offsetof(CqeResRc, imm_data_or_inv_r_key) == 4);
static_assert(offsetof(CqeResRc, qp_handle) == 8 && offsetof(CqeResRc, mr_handle) == 16);
static_assert(offsetof(CqeResRc, cqe_type_toggle) == 24 && offsetof(CqeResRc, status) == 25);
static_assert(offsetof(CqeResRc, flags) == 26 && offsetof(CqeResRc, srq_or_rq_wr_id) == 28);
static_assert(std::has_unique_object_representations_v<CqeResRc>);

namespace cqe_res_flags {
inline constexpr Field<0, 1> SRQ;  // the WQE came from an SRQ
inline constexpr Field<1, 1> IMM;
inline constexpr Field<2, 1> INV;
inline constexpr Field<3, 1> RDMA;              // 0 SEND, 1 RDMA WRITE with immediate
inline constexpr Field<0, 20> srq_or_rq_wr_id;  // of srq_or_rq_wr_id
}  // namespace cqe_res_flags

// §5.5.3: the terminal CQE (type TERMINAL), written when a QP goes to error.
struct CqeTerminal {
    Le64 qp_handle;
    Le16 sq_cons_idx;
    Le16 rq_cons_idx;  // 0xFFFF: not applicable
    std::array<std::uint8_t, 12> reserved_12;
    std::uint8_t cqe_type_toggle;
    std::uint8_t status;  // 0
    std::array<std::uint8_t, 6> reserved_26;
};
static_assert(sizeof(CqeTerminal) == 32);
static_assert(offsetof(CqeTerminal, qp_handle) == 0 && offsetof(CqeTerminal, sq_cons_idx) == 8);
static_assert(offsetof(CqeTerminal, rq_cons_idx) == 10 && offsetof(CqeTerminal, cqe_type_toggle) == 24);
static_assert(offsetof(CqeTerminal, status) == 25);
static_assert(std::has_unique_object_representations_v<CqeTerminal>);
namespace cqe_terminal {
inline constexpr std::uint16_t rq_cons_idx_none = 0xFFFF;  // §5.5.3: not applicable
}  // namespace cqe_terminal

// byte 24 of a CQE of `type` written with toggle `phase`.
constexpr std::uint8_t cqe_type_toggle(CqeType type, unsigned phase) {
    return static_cast<std::uint8_t>(cqe::cqe_type(static_cast<std::uint8_t>(type)) | cqe::toggle(phase));
}
static_assert(cqe_type_toggle(CqeType::RES_RC, 0) == 0x02 && cqe_type_toggle(CqeType::CUT_OFF, 1) == 0x1F);

// §5.6: NQ entries (16 bytes).
namespace nq {
inline constexpr std::size_t entry_bytes = 16;
inline constexpr std::size_t v_offset = 8;  // the byte a producer writes last
inline constexpr Field<0, 6> type;          // of info10_type: NqType
inline constexpr Field<6, 2> toggle;        // [P7] CQ arm toggle; 0 on P5
inline constexpr Field<0, 1> v;             // of info63_v[0]: the phase bit
}  // namespace nq

enum class NqType : std::uint8_t {
    CQ_NOTIFICATION = 0x30,
    SRQ_EVENT = 0x32,
    DBQ_EVENT = 0x34,
    QP_EVENT = 0x38,
    FUNC_EVENT = 0x3A,
    NQ_REASSIGN = 0x3C,
};

struct NqBase {
    Le16 info10_type;  // nq::type
    Le16 info16;
    Le32 info32;
    std::array<Le32, 2> info63_v;  // info63_v[0] bit 0: V
};
static_assert(sizeof(NqBase) == 16);
static_assert(offsetof(NqBase, info10_type) == 0 && offsetof(NqBase, info16) == 2);
static_assert(offsetof(NqBase, info32) == 4 && offsetof(NqBase, info63_v) == 8);
static_assert(std::has_unique_object_representations_v<NqBase>);

// §5.6: `nq_cn`, the CQ notification.
struct NqCn {
    Le16 type;  // nq::type = CQ_NOTIFICATION; nq::toggle [P7]
    Le16 reserved_2;
    Le32 cq_handle_low;   // low 32 bits of CREATE_CQ.cq_handle
    Le32 v;               // bit 0: the phase bit
    Le32 cq_handle_high;  // high 32 bits
};
static_assert(sizeof(NqCn) == 16);
static_assert(offsetof(NqCn, type) == 0 && offsetof(NqCn, cq_handle_low) == 4);
static_assert(offsetof(NqCn, v) == 8 && offsetof(NqCn, cq_handle_high) == 12);
static_assert(std::has_unique_object_representations_v<NqCn>);

}  // namespace rig::bnxt::hsi

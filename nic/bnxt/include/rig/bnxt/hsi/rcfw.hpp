// rig/bnxt/hsi/rcfw.hpp: the RoCE firmware channel (docs/hsi.md §4): the CMDQ the
// driver fills with commands (16-byte slots, published through the BAR0 mailbox, producer
// register and trigger), the CREQ the firmware answers on (16-byte entries with a phase
// bit), side buffers for query commands, status codes, opcodes and the layout of every
// command the minimal driver sends; the QP commands (§4.6.8-§4.6.11) are in rcfw_qp.hpp,
// which this header includes at its end. Layouts and codes only: no state.
//
// Growth rule (§0, §4.6.0): a command may be longer than its oldest layout (firmware and
// model treat missing trailing bytes as zero); `min_command_bytes` gives the oldest size.
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

// §4.2: the 16 bytes written to the BAR0 mailbox (bar0::cmdq_mailbox) as four u32.
struct CmdqInit {
    Le64 cmdq_pbl;            // level 0: the CMDQ buffer; level 1/2: the PTE/PDE page
    Le16 cmdq_size_cmdq_lvl;  // cmdq_init::cmdq_lvl, cmdq_init::cmdq_size
    Le16 creq_ring_id;        // HWRM_RING_ALLOC ring_id of the CREQ
    Le32 prod_idx;            // 0
};
static_assert(sizeof(CmdqInit) == 16);
static_assert(offsetof(CmdqInit, cmdq_pbl) == 0 && offsetof(CmdqInit, cmdq_size_cmdq_lvl) == 8);
static_assert(offsetof(CmdqInit, creq_ring_id) == 10 && offsetof(CmdqInit, prod_idx) == 12);
static_assert(std::has_unique_object_representations_v<CmdqInit>);

namespace cmdq_init {
inline constexpr Field<0, 2> cmdq_lvl;    // PblLevel
inline constexpr Field<2, 14> cmdq_size;  // depth in 16-byte slots, a power of two
}  // namespace cmdq_init

// §4.3: the CMDQ producer register (bar0::cmdq_prod) after channel start.
namespace cmdq_prod {
inline constexpr Field<0, 16> prod_idx;            // slots ever written, modulo 2^16
inline constexpr Field<31, 1> RESET;               // set on the first write after channel start
inline constexpr std::uint32_t trigger_value = 1;  // written to bar0::cmdq_trigger
}  // namespace cmdq_prod

// §4.6.0: opcodes. Those after DELETE_GID in each group are not needed by the minimal subset.
enum class Opcode : std::uint8_t {
    CREATE_QP = 0x01,
    DESTROY_QP = 0x02,
    MODIFY_QP = 0x03,
    QUERY_QP = 0x04,
    CREATE_SRQ = 0x05,
    DESTROY_SRQ = 0x06,
    QUERY_SRQ = 0x08,
    CREATE_CQ = 0x09,
    DESTROY_CQ = 0x0A,
    RESIZE_CQ = 0x0C,
    ALLOCATE_MRW = 0x0D,
    DEALLOCATE_KEY = 0x0E,
    REGISTER_MR = 0x0F,
    DEREGISTER_MR = 0x10,
    ADD_GID = 0x11,
    DELETE_GID = 0x12,
    CREATE_QP1 = 0x13,
    DESTROY_QP1 = 0x14,
    CREATE_AH = 0x15,
    DESTROY_AH = 0x16,
    MODIFY_GID = 0x17,
    QUERY_GID = 0x18,
    INITIALIZE_FW = 0x80,
    DEINITIALIZE_FW = 0x81,
    STOP_FUNC = 0x82,
    QUERY_FUNC = 0x83,
    SET_FUNC_RESOURCES = 0x84,
    READ_CONTEXT = 0x85,
    MAP_TC_TO_COS = 0x8A,
    QUERY_VERSION = 0x8B,
    MODIFY_ROCE_CC = 0x8C,
    QUERY_ROCE_CC = 0x8D,
    QUERY_ROCE_STATS = 0x8E,
    SET_LINK_AGGR_MODE = 0x8F,
    MODIFY_CQ = 0x90,
    QUERY_QP_EXTEND = 0x91,
    QUERY_ROCE_STATS_EXT = 0x92,
};

// The opcode's name as §4.6.0 spells it; empty for a value the table does not list.
constexpr std::string_view name(Opcode op) {
    switch (op) {
    case Opcode::CREATE_QP: return "CREATE_QP";
    case Opcode::DESTROY_QP: return "DESTROY_QP";
    case Opcode::MODIFY_QP: return "MODIFY_QP";
    case Opcode::QUERY_QP: return "QUERY_QP";
    case Opcode::CREATE_SRQ: return "CREATE_SRQ";
    case Opcode::DESTROY_SRQ: return "DESTROY_SRQ";
    case Opcode::QUERY_SRQ: return "QUERY_SRQ";
    case Opcode::CREATE_CQ: return "CREATE_CQ";
    case Opcode::DESTROY_CQ: return "DESTROY_CQ";
    case Opcode::RESIZE_CQ: return "RESIZE_CQ";
    case Opcode::ALLOCATE_MRW: return "ALLOCATE_MRW";
    case Opcode::DEALLOCATE_KEY: return "DEALLOCATE_KEY";
    case Opcode::REGISTER_MR: return "REGISTER_MR";
    case Opcode::DEREGISTER_MR: return "DEREGISTER_MR";
    case Opcode::ADD_GID: return "ADD_GID";
    case Opcode::DELETE_GID: return "DELETE_GID";
    case Opcode::CREATE_QP1: return "CREATE_QP1";
    case Opcode::DESTROY_QP1: return "DESTROY_QP1";
    case Opcode::CREATE_AH: return "CREATE_AH";
    case Opcode::DESTROY_AH: return "DESTROY_AH";
    case Opcode::MODIFY_GID: return "MODIFY_GID";
    case Opcode::QUERY_GID: return "QUERY_GID";
    case Opcode::INITIALIZE_FW: return "INITIALIZE_FW";
    case Opcode::DEINITIALIZE_FW: return "DEINITIALIZE_FW";
    case Opcode::STOP_FUNC: return "STOP_FUNC";
    case Opcode::QUERY_FUNC: return "QUERY_FUNC";
    case Opcode::SET_FUNC_RESOURCES: return "SET_FUNC_RESOURCES";
    case Opcode::READ_CONTEXT: return "READ_CONTEXT";
    case Opcode::MAP_TC_TO_COS: return "MAP_TC_TO_COS";
    case Opcode::QUERY_VERSION: return "QUERY_VERSION";
    case Opcode::MODIFY_ROCE_CC: return "MODIFY_ROCE_CC";
    case Opcode::QUERY_ROCE_CC: return "QUERY_ROCE_CC";
    case Opcode::QUERY_ROCE_STATS: return "QUERY_ROCE_STATS";
    case Opcode::SET_LINK_AGGR_MODE: return "SET_LINK_AGGR_MODE";
    case Opcode::MODIFY_CQ: return "MODIFY_CQ";
    case Opcode::QUERY_QP_EXTEND: return "QUERY_QP_EXTEND";
    case Opcode::QUERY_ROCE_STATS_EXT: return "QUERY_ROCE_STATS_EXT";
    }
    return "";
}

// §4.6.0 "Sizes seen": the oldest (shortest) layout of each command the minimal driver
// sends, in bytes; 0 for an opcode outside that set.
constexpr std::size_t min_command_bytes(Opcode op) {
    switch (op) {
    case Opcode::CREATE_QP: return 96;
    case Opcode::DESTROY_QP: return 24;
    case Opcode::MODIFY_QP: return 112;
    case Opcode::QUERY_QP: return 24;
    case Opcode::CREATE_CQ: return 48;
    case Opcode::DESTROY_CQ: return 24;
    case Opcode::ALLOCATE_MRW: return 32;
    case Opcode::DEALLOCATE_KEY: return 24;
    case Opcode::REGISTER_MR: return 48;
    case Opcode::DEREGISTER_MR: return 24;
    case Opcode::ADD_GID: return 48;
    case Opcode::DELETE_GID: return 24;
    case Opcode::INITIALIZE_FW: return 112;
    case Opcode::DEINITIALIZE_FW: return 16;
    case Opcode::QUERY_FUNC: return 16;
    case Opcode::QUERY_VERSION: return 16;
    default: return 0;
    }
}

// §4.6.0 "Sizes seen": the longest layout of each command, rounded up to the 16-byte slots
// cmd_size counts; 0 for an opcode outside the set. [UNCERTAIN] a firmware's limit: the
// model takes no longer command of a known opcode (its trailing bytes would be fields the
// firmware does not have).
constexpr std::size_t max_command_bytes(Opcode op) {
    std::size_t longest = min_command_bytes(op);
    switch (op) {
    case Opcode::CREATE_QP: longest = 112; break;
    case Opcode::MODIFY_QP: longest = 144; break;
    case Opcode::CREATE_CQ: longest = 64; break;
    case Opcode::REGISTER_MR: longest = 64; break;
    case Opcode::INITIALIZE_FW: longest = 128; break;
    default: break;
    }
    return (longest + 15) / 16 * 16;
}
static_assert(max_command_bytes(Opcode::DESTROY_QP) == 32 && max_command_bytes(Opcode::MODIFY_QP) == 144);

// §4.5.2: CREQ completion status.
enum class RcfwStatus : std::uint8_t {
    SUCCESS = 0,
    FAIL = 1,
    RESOURCES = 2,
    INVALID_CMD = 3,
    NOT_IMPLEMENTED = 4,
    INVALID_PARAMETER = 5,
    HARDWARE_ERROR = 6,
    INTERNAL_ERROR = 7,
};

constexpr std::string_view name(RcfwStatus s) {
    switch (s) {
    case RcfwStatus::SUCCESS: return "SUCCESS";
    case RcfwStatus::FAIL: return "FAIL";
    case RcfwStatus::RESOURCES: return "RESOURCES";
    case RcfwStatus::INVALID_CMD: return "INVALID_CMD";
    case RcfwStatus::NOT_IMPLEMENTED: return "NOT_IMPLEMENTED";
    case RcfwStatus::INVALID_PARAMETER: return "INVALID_PARAMETER";
    case RcfwStatus::HARDWARE_ERROR: return "HARDWARE_ERROR";
    case RcfwStatus::INTERNAL_ERROR: return "INTERNAL_ERROR";
    }
    return "";
}

// §4.4: `cmdq_base`, the first 16 bytes of every command.
struct CmdqBase {
    std::uint8_t opcode;     // Opcode
    std::uint8_t cmd_size;   // length in 16-byte slots
    Le16 flags;              // command specific, 0 unless listed
    Le16 cookie;             // echoed in the CREQ completion and the side buffer
    std::uint8_t resp_size;  // side-buffer length in 16-byte units, 0 if none
    std::uint8_t qp_type;    // reserved (0), except MODIFY_QP: QpType with the optimized modify
    Le64 resp_addr;          // side-buffer bus address, 0 if none
};
static_assert(sizeof(CmdqBase) == 16);
static_assert(offsetof(CmdqBase, opcode) == 0 && offsetof(CmdqBase, cmd_size) == 1);
static_assert(offsetof(CmdqBase, flags) == 2 && offsetof(CmdqBase, cookie) == 4);
static_assert(offsetof(CmdqBase, resp_size) == 6 && offsetof(CmdqBase, qp_type) == 7);
static_assert(offsetof(CmdqBase, resp_addr) == 8);
static_assert(std::has_unique_object_representations_v<CmdqBase>);

// §4.3: Linux's cookie: (seq & (depth - 1)) | bit 15 "caller blocks" (driver private).
namespace cookie {
inline constexpr Field<15, 1> BLOCKING;
}

// §4.5: every CREQ entry (16 bytes).
struct CreqBase {
    std::uint8_t type;  // creq::type: CreqType
    std::array<std::uint8_t, 7> reserved_1;
    std::uint8_t v;      // creq::v: the phase bit (§0)
    std::uint8_t event;  // completions: the opcode; FUNC_EVENT: FuncEvent
    std::array<std::uint8_t, 6> reserved_10;
};
static_assert(sizeof(CreqBase) == 16);
static_assert(offsetof(CreqBase, type) == 0 && offsetof(CreqBase, v) == 8 && offsetof(CreqBase, event) == 9);
static_assert(std::has_unique_object_representations_v<CreqBase>);

namespace creq {
inline constexpr Field<0, 6> type;          // of CreqBase.type
inline constexpr Field<0, 1> v;             // of CreqBase.v
inline constexpr std::size_t v_offset = 8;  // the byte a producer writes last
inline constexpr std::size_t entry_bytes = 16;
}  // namespace creq

enum class CreqType : std::uint8_t {
    HWRM_ASYNC_EVENT = 0x2E,  // may appear; ignored
    QP_EVENT = 0x38,          // command completions and QP errors
    FUNC_EVENT = 0x3A,
};

// §4.5.1: a command completion (type QP_EVENT, event = opcode).
struct CreqCompletion {
    std::uint8_t type;                        // CreqType::QP_EVENT
    std::uint8_t status;                      // RcfwStatus
    Le16 cookie;                              // the command's cookie
    Le32 xid;                                 // command specific (§4.6.0 "Completion xid")
    std::uint8_t v;                           // phase bit
    std::uint8_t event;                       // the command's opcode
    std::array<std::uint8_t, 6> reserved_10;  // command specific
};
static_assert(sizeof(CreqCompletion) == 16);
static_assert(offsetof(CreqCompletion, status) == 1 && offsetof(CreqCompletion, cookie) == 2);
static_assert(offsetof(CreqCompletion, xid) == 4 && offsetof(CreqCompletion, v) == 8);
static_assert(offsetof(CreqCompletion, event) == 9);
static_assert(std::has_unique_object_representations_v<CreqCompletion>);

// §4.6.2, §4.6.10: QUERY_FUNC and QUERY_QP completions carry `size` where others carry xid:
// the side-buffer length written, in 16-byte units [UNCERTAIN: the spec names no unit].
struct CreqQueryCompletion {
    std::uint8_t type;
    std::uint8_t status;
    Le16 cookie;
    Le32 size;
    std::uint8_t v;
    std::uint8_t event;
    std::array<std::uint8_t, 6> reserved_10;
};
static_assert(sizeof(CreqQueryCompletion) == 16);
static_assert(offsetof(CreqQueryCompletion, size) == 4 && offsetof(CreqQueryCompletion, v) == 8);
static_assert(std::has_unique_object_representations_v<CreqQueryCompletion>);

// §4.6.1: the QUERY_VERSION completion (firmware and RoCE SP HSI versions inline).
struct CreqQueryVersionCompletion {
    std::uint8_t type;
    std::uint8_t status;
    Le16 cookie;
    std::uint8_t fw_maj;
    std::uint8_t fw_minor;
    std::uint8_t fw_bld;
    std::uint8_t fw_rsvd;
    std::uint8_t v;
    std::uint8_t event;
    std::array<std::uint8_t, 2> reserved_10;
    std::uint8_t intf_maj;
    std::uint8_t intf_minor;
    std::uint8_t intf_bld;
    std::uint8_t intf_rsvd;
};
static_assert(sizeof(CreqQueryVersionCompletion) == 16);
static_assert(offsetof(CreqQueryVersionCompletion, fw_maj) == 4);
static_assert(offsetof(CreqQueryVersionCompletion, fw_minor) == 5);
static_assert(offsetof(CreqQueryVersionCompletion, fw_bld) == 6);
static_assert(offsetof(CreqQueryVersionCompletion, fw_rsvd) == 7);
static_assert(offsetof(CreqQueryVersionCompletion, v) == 8 && offsetof(CreqQueryVersionCompletion, event) == 9);
static_assert(offsetof(CreqQueryVersionCompletion, intf_maj) == 12);
static_assert(offsetof(CreqQueryVersionCompletion, intf_minor) == 13);
static_assert(offsetof(CreqQueryVersionCompletion, intf_bld) == 14);
static_assert(offsetof(CreqQueryVersionCompletion, intf_rsvd) == 15);
static_assert(std::has_unique_object_representations_v<CreqQueryVersionCompletion>);

// §4.6.7: the DESTROY_CQ completion.
struct CreqDestroyCqCompletion {
    std::uint8_t type;
    std::uint8_t status;
    Le16 cookie;
    Le32 xid;  // CQ id
    std::uint8_t v;
    std::uint8_t event;
    Le16 cq_arm_lvl;        // bits 1:0
    Le16 total_cnq_events;  // NQ notifications ever generated for the CQ
    std::array<std::uint8_t, 2> reserved_14;
};
static_assert(sizeof(CreqDestroyCqCompletion) == 16);
static_assert(offsetof(CreqDestroyCqCompletion, xid) == 4 && offsetof(CreqDestroyCqCompletion, v) == 8);
static_assert(offsetof(CreqDestroyCqCompletion, cq_arm_lvl) == 10);
static_assert(offsetof(CreqDestroyCqCompletion, total_cnq_events) == 12);
static_assert(std::has_unique_object_representations_v<CreqDestroyCqCompletion>);

// §4.6.12: the DEREGISTER_MR completion (DEALLOCATE_KEY: the same bytes, bound_window_info).
struct CreqDeregisterMrCompletion {
    std::uint8_t type;
    std::uint8_t status;
    Le16 cookie;
    Le32 xid;
    std::uint8_t v;
    std::uint8_t event;
    std::array<std::uint8_t, 2> reserved_10;
    Le32 bound_windows;
};
static_assert(sizeof(CreqDeregisterMrCompletion) == 16);
static_assert(offsetof(CreqDeregisterMrCompletion, bound_windows) == 12);
static_assert(std::has_unique_object_representations_v<CreqDeregisterMrCompletion>);

struct CreqDeallocateKeyCompletion {
    std::uint8_t type;
    std::uint8_t status;
    Le16 cookie;
    Le32 xid;
    std::uint8_t v;
    std::uint8_t event;
    std::array<std::uint8_t, 2> reserved_10;
    Le32 bound_window_info;
};
static_assert(sizeof(CreqDeallocateKeyCompletion) == 16);
static_assert(offsetof(CreqDeallocateKeyCompletion, bound_window_info) == 12);
static_assert(std::has_unique_object_representations_v<CreqDeallocateKeyCompletion>);

// §4.5.4: QP_EVENT events beyond command completions.
namespace creq_event {
inline constexpr std::uint8_t QP_ERROR_NOTIFICATION = 0xC0;  // a QP entered ERR on its own
inline constexpr std::uint8_t CQ_ERROR_NOTIFICATION = 0xC1;  // CQ overflow etc.
}  // namespace creq_event

// §4.5.4: the QP error notification (type QP_EVENT, event 0xC0).
struct CreqQpErrorNotification {
    std::uint8_t type;
    std::uint8_t status;
    std::uint8_t req_slow_path_state;
    std::uint8_t req_err_state_reason;  // ReqErrStateReason
    Le32 xid;                           // QP number
    std::uint8_t v;
    std::uint8_t event;  // creq_event::QP_ERROR_NOTIFICATION
    std::uint8_t res_slow_path_state;
    std::uint8_t res_err_state_reason;  // ResErrStateReason
    Le16 sq_cons_idx;
    Le16 rq_cons_idx;
};
static_assert(sizeof(CreqQpErrorNotification) == 16);
static_assert(offsetof(CreqQpErrorNotification, status) == 1);
static_assert(offsetof(CreqQpErrorNotification, req_slow_path_state) == 2);
static_assert(offsetof(CreqQpErrorNotification, req_err_state_reason) == 3);
static_assert(offsetof(CreqQpErrorNotification, xid) == 4 && offsetof(CreqQpErrorNotification, v) == 8);
static_assert(offsetof(CreqQpErrorNotification, event) == 9);
static_assert(offsetof(CreqQpErrorNotification, res_slow_path_state) == 10);
static_assert(offsetof(CreqQpErrorNotification, res_err_state_reason) == 11);
static_assert(offsetof(CreqQpErrorNotification, sq_cons_idx) == 12);
static_assert(offsetof(CreqQpErrorNotification, rq_cons_idx) == 14);
static_assert(std::has_unique_object_representations_v<CreqQpErrorNotification>);

// §4.5.4: the CQ error notification (type QP_EVENT, event 0xC1), roce_hsi.h
// creq_cq_error_notification: why in cq_err_reason, the CQ id in xid.
struct CreqCqErrorNotification {
    std::uint8_t type;
    std::uint8_t status;
    std::uint8_t cq_err_reason;  // CqErrReason
    std::uint8_t unused_0;
    Le32 xid;  // CQ id
    std::uint8_t v;
    std::uint8_t event;  // creq_event::CQ_ERROR_NOTIFICATION
    std::array<std::uint8_t, 6> reserved48;
};
static_assert(sizeof(CreqCqErrorNotification) == 16);
static_assert(offsetof(CreqCqErrorNotification, cq_err_reason) == 2);
static_assert(offsetof(CreqCqErrorNotification, xid) == 4 && offsetof(CreqCqErrorNotification, v) == 8);
static_assert(offsetof(CreqCqErrorNotification, event) == 9);
static_assert(std::has_unique_object_representations_v<CreqCqErrorNotification>);

// roce_hsi.h CREQ_CQ_ERROR_NOTIFICATION_CQ_ERR_REASON_*: the requester's (a CQE of a send
// queue) or the responder's (of a receive queue) CQ failed.
enum class CqErrReason : std::uint8_t {
    REQ_CQ_INVALID_ERROR = 0x1,
    REQ_CQ_OVERFLOW_ERROR = 0x2,
    REQ_CQ_LOAD_ERROR = 0x3,
    RES_CQ_INVALID_ERROR = 0x4,
    RES_CQ_OVERFLOW_ERROR = 0x5,
    RES_CQ_LOAD_ERROR = 0x6,
};

// §4.5.4 reason codes: only the values the spec names. Which NAK maps to which of
// NAK_ARRIVAL_1..4 (0x4..0x7) is [UNCERTAIN]; the model uses the order of the AETH NAK
// codes (sequence error, invalid request, remote access, remote operational).
enum class ReqErrStateReason : std::uint8_t {
    NO_ERROR = 0x0,
    TIMEOUT_RETRY_LIMIT = 0x2,
    RNR_TIMEOUT_RETRY_LIMIT = 0x3,
    NAK_ARRIVAL_1 = 0x4,
    NAK_ARRIVAL_2 = 0x5,
    NAK_ARRIVAL_3 = 0x6,
    NAK_ARRIVAL_4 = 0x7,
    RX_MEMORY_ERROR = 0x8,
    TX_MEMORY_ERROR = 0x9,
};
enum class ResErrStateReason : std::uint8_t {
    NO_ERROR = 0x0,
    RX_INVALID_R_KEY = 0x6,
    RX_NO_PERMISSION = 0x8,
    RX_RANGE_ERROR = 0x9,
};

// §4.5.4: FUNC_EVENT events (informational).
enum class FuncEvent : std::uint8_t {
    TX_WQE_ERROR = 0x01,
    TX_DATA_ERROR = 0x02,
    RX_WQE_ERROR = 0x03,
    RX_DATA_ERROR = 0x04,
    CQ_ERROR = 0x05,
    TQM_ERROR = 0x06,
    CFCQ_ERROR = 0x07,
    CFCS_ERROR = 0x08,
    CFCC_ERROR = 0x09,
    CFCM_ERROR = 0x0A,
    TIM_ERROR = 0x0B,
    VF_COMM_REQUEST = 0x80,
    RESOURCE_EXHAUSTED = 0x81,
};

// §4.5.3: the first 8 bytes of every side buffer. The firmware writes at most
// resp_size x 16 bytes, then the CREQ entry.
struct SbHeader {
    std::uint8_t opcode;
    std::uint8_t status;
    Le16 cookie;
    Le16 flags;
    std::uint8_t resp_size;  // 16-byte units actually written
    std::uint8_t reserved_7;
};
static_assert(sizeof(SbHeader) == 8);
static_assert(offsetof(SbHeader, opcode) == 0 && offsetof(SbHeader, status) == 1);
static_assert(offsetof(SbHeader, cookie) == 2 && offsetof(SbHeader, flags) == 4);
static_assert(offsetof(SbHeader, resp_size) == 6);
static_assert(std::has_unique_object_representations_v<SbHeader>);

// §4.6.1 QUERY_VERSION, §4.6.2 QUERY_FUNC, §4.6.4 DEINITIALIZE_FW: the header alone.

// §4.6.2: the QUERY_FUNC side buffer (160 bytes; `resp_size` = 10).
struct QueryFuncSb {
    SbHeader header;
    Le64 max_mr_size;
    Le32 max_qp;         // excludes QP1
    Le16 max_qp_wr;      // WQEs per queue (Linux uses value - 1)
    Le16 dev_cap_flags;  // query_func::RESIZE_QP, ...
    Le32 max_cq;
    Le32 max_cqe;  // CQEs per CQ
    Le32 max_pd;
    std::uint8_t max_sge;
    std::uint8_t max_srq_sge;
    std::uint8_t max_qp_rd_atom;       // responder depth
    std::uint8_t max_qp_init_rd_atom;  // initiator depth
    Le32 max_mr;
    Le32 max_mw;
    Le32 max_raw_eth_qp;
    Le32 max_ah;
    Le32 max_fmr;
    Le32 max_srq_wr;
    Le32 max_pkeys;
    Le32 max_inline_data;
    std::uint8_t max_map_per_fmr;
    std::uint8_t l2_db_space_size;  // (value + 1) x 4 KiB
    Le16 max_srq;
    Le32 max_gid;                                 // hardware GID table size
    std::array<std::uint8_t, 48> tqm_alloc_reqs;  // pre-P5 only
    Le32 max_dpi;
    std::uint8_t max_sge_var_wqe;
    std::uint8_t dev_cap_ext_flags;
    Le16 max_inline_data_var_wqe;
    Le32 start_qid;
    std::uint8_t max_msn_table_size;
    std::uint8_t dev_cap_ext_flags_1;
    Le16 dev_cap_ext_flags_2;
    std::array<std::uint8_t, 16> reserved_144;  // [P7] and later fields: 0
};
static_assert(sizeof(QueryFuncSb) == 160);
static_assert(offsetof(QueryFuncSb, max_mr_size) == 8 && offsetof(QueryFuncSb, max_qp) == 16);
static_assert(offsetof(QueryFuncSb, max_qp_wr) == 20 && offsetof(QueryFuncSb, dev_cap_flags) == 22);
static_assert(offsetof(QueryFuncSb, max_cq) == 24 && offsetof(QueryFuncSb, max_cqe) == 28);
static_assert(offsetof(QueryFuncSb, max_pd) == 32 && offsetof(QueryFuncSb, max_sge) == 36);
static_assert(offsetof(QueryFuncSb, max_srq_sge) == 37 && offsetof(QueryFuncSb, max_qp_rd_atom) == 38);
static_assert(offsetof(QueryFuncSb, max_qp_init_rd_atom) == 39 && offsetof(QueryFuncSb, max_mr) == 40);
static_assert(offsetof(QueryFuncSb, max_mw) == 44 && offsetof(QueryFuncSb, max_raw_eth_qp) == 48);
static_assert(offsetof(QueryFuncSb, max_ah) == 52 && offsetof(QueryFuncSb, max_fmr) == 56);
static_assert(offsetof(QueryFuncSb, max_srq_wr) == 60 && offsetof(QueryFuncSb, max_pkeys) == 64);
static_assert(offsetof(QueryFuncSb, max_inline_data) == 68 && offsetof(QueryFuncSb, max_map_per_fmr) == 72);
static_assert(offsetof(QueryFuncSb, l2_db_space_size) == 73 && offsetof(QueryFuncSb, max_srq) == 74);
static_assert(offsetof(QueryFuncSb, max_gid) == 76 && offsetof(QueryFuncSb, tqm_alloc_reqs) == 80);
static_assert(offsetof(QueryFuncSb, max_dpi) == 128 && offsetof(QueryFuncSb, max_sge_var_wqe) == 132);
static_assert(offsetof(QueryFuncSb, dev_cap_ext_flags) == 133);
static_assert(offsetof(QueryFuncSb, max_inline_data_var_wqe) == 134 && offsetof(QueryFuncSb, start_qid) == 136);
static_assert(offsetof(QueryFuncSb, max_msn_table_size) == 140);
static_assert(offsetof(QueryFuncSb, dev_cap_ext_flags_1) == 141);
static_assert(offsetof(QueryFuncSb, dev_cap_ext_flags_2) == 142);
static_assert(std::has_unique_object_representations_v<QueryFuncSb>);

namespace query_func {
// dev_cap_flags.
inline constexpr Field<0, 1> RESIZE_QP;
inline constexpr Field<1, 3> CC_GENERATION;
inline constexpr Field<4, 1> EXT_STATS;
inline constexpr Field<5, 1> MR_REGISTER_ALLOC;
inline constexpr Field<7, 1> CQE_V2;
inline constexpr Field<8, 1> PINGPONG_PUSH_MODE;
inline constexpr Field<9, 1> HW_REQUESTER_RETX_ENABLED;
inline constexpr Field<10, 1> HW_RESPONDER_RETX_ENABLED;
// dev_cap_ext_flags.
inline constexpr Field<0, 1> ATOMIC_OPS_NOT_SUPPORTED;
inline constexpr Field<6, 1> FIXED_SIZE_WQE_DISABLED;
// dev_cap_ext_flags_2.
inline constexpr Field<0, 1> OPTIMIZE_MODIFY_QP_SUPPORTED;
inline constexpr Field<4, 2> REQ_RETRANSMISSION_SUPPORT;  // 0 host PSN table (P5), 1 host MSN table (P7)
inline constexpr Field<12, 1> MIN_RNR_RTR_RTS_OPT;
}  // namespace query_func

// §4.6.3 INITIALIZE_FW, 112 bytes (128 with DRV_VERSION). On P5 every context field is 0.
struct InitializeFw {
    CmdqBase header;  // flags: initialize_fw::MRAV_RESERVATION_SPLIT, ...; minimal 0
    std::uint8_t qpc_pg_size_qpc_lvl;
    std::uint8_t mrw_pg_size_mrw_lvl;
    std::uint8_t srq_pg_size_srq_lvl;
    std::uint8_t cq_pg_size_cq_lvl;
    std::uint8_t tqm_pg_size_tqm_lvl;
    std::uint8_t tim_pg_size_tim_lvl;
    Le16 log2_dbr_pg_size;  // bits 3:0: log2(host page size) - 12
    Le64 qpc_page_dir;
    Le64 mrw_page_dir;
    Le64 srq_page_dir;
    Le64 cq_page_dir;
    Le64 tqm_page_dir;
    Le64 tim_page_dir;
    Le32 number_of_qp;
    Le32 number_of_mrw;
    Le32 number_of_srq;
    Le32 number_of_cq;
    Le32 max_qp_per_vf;
    Le32 max_mrw_per_vf;
    Le32 max_srq_per_vf;
    Le32 max_cq_per_vf;
    Le32 max_gid_per_vf;
    Le32 stat_ctx_id;  // from HWRM_STAT_CTX_ALLOC
};
static_assert(sizeof(InitializeFw) == 112);
static_assert(offsetof(InitializeFw, qpc_pg_size_qpc_lvl) == 16 && offsetof(InitializeFw, mrw_pg_size_mrw_lvl) == 17);
static_assert(offsetof(InitializeFw, srq_pg_size_srq_lvl) == 18 && offsetof(InitializeFw, cq_pg_size_cq_lvl) == 19);
static_assert(offsetof(InitializeFw, tqm_pg_size_tqm_lvl) == 20 && offsetof(InitializeFw, tim_pg_size_tim_lvl) == 21);
static_assert(offsetof(InitializeFw, log2_dbr_pg_size) == 22 && offsetof(InitializeFw, qpc_page_dir) == 24);
static_assert(offsetof(InitializeFw, mrw_page_dir) == 32 && offsetof(InitializeFw, srq_page_dir) == 40);
static_assert(offsetof(InitializeFw, cq_page_dir) == 48 && offsetof(InitializeFw, tqm_page_dir) == 56);
static_assert(offsetof(InitializeFw, tim_page_dir) == 64 && offsetof(InitializeFw, number_of_qp) == 72);
static_assert(offsetof(InitializeFw, number_of_mrw) == 76 && offsetof(InitializeFw, number_of_srq) == 80);
static_assert(offsetof(InitializeFw, number_of_cq) == 84 && offsetof(InitializeFw, max_qp_per_vf) == 88);
static_assert(offsetof(InitializeFw, max_mrw_per_vf) == 92 && offsetof(InitializeFw, max_srq_per_vf) == 96);
static_assert(offsetof(InitializeFw, max_cq_per_vf) == 100 && offsetof(InitializeFw, max_gid_per_vf) == 104);
static_assert(offsetof(InitializeFw, stat_ctx_id) == 108);
static_assert(std::has_unique_object_representations_v<InitializeFw>);

namespace initialize_fw {
inline constexpr Field<0, 1> MRAV_RESERVATION_SPLIT;
inline constexpr Field<1, 1> HW_REQUESTER_RETX_SUPPORTED;
inline constexpr Field<2, 1> DRV_VERSION;
inline constexpr Field<3, 1> OPTIMIZE_MODIFY_QP_SUPPORTED;
inline constexpr Field<4, 1> L2_VF_RESOURCE_MGMT;
inline constexpr Field<0, 4> log2_dbr_pg_size;  // of the u16
}  // namespace initialize_fw

// §4.6.5 ADD_GID, 48 bytes.
struct AddGid {
    CmdqBase header;
    std::array<std::uint8_t, 16> gid;     // reversed: byte 16 = GID byte 15 (add_gid_bytes)
    std::array<std::uint8_t, 6> src_mac;  // 16-bit pairs swapped (add_gid_mac)
    Le16 vlan;                            // add_gid::vlan_id, tpid_sel, VLAN_EN; untagged: 0
    Le16 ipid;
    Le16 stats_ctx;  // add_gid::stats_ctx_id, stats_ctx_valid; 0
    std::array<std::uint8_t, 4> reserved_44;
};
static_assert(sizeof(AddGid) == 48);
static_assert(offsetof(AddGid, gid) == 16 && offsetof(AddGid, src_mac) == 32);
static_assert(offsetof(AddGid, vlan) == 38 && offsetof(AddGid, ipid) == 40);
static_assert(offsetof(AddGid, stats_ctx) == 42);
static_assert(std::has_unique_object_representations_v<AddGid>);

namespace add_gid {
inline constexpr Field<0, 12> vlan_id;
inline constexpr Field<12, 3> tpid_sel;  // 0 0x88A8, 1 0x8100, 2 0x9100, 3 0x9200, 4 0x9300
inline constexpr Field<15, 1> VLAN_EN;
inline constexpr Field<0, 15> stats_ctx_id;
inline constexpr Field<15, 1> stats_ctx_valid;
}  // namespace add_gid

// §4.6.5: a GID (wire order, byte 0 first) as ADD_GID.gid carries it, and back.
constexpr std::array<std::uint8_t, 16> add_gid_bytes(const std::array<std::uint8_t, 16>& gid) {
    std::array<std::uint8_t, 16> out{};
    for (std::size_t i = 0; i < 16; ++i) out[i] = gid[15 - i];
    return out;
}
// §4.6.5: a MAC (wire order) as ADD_GID.src_mac carries it: each 16-bit pair swapped.
// The swap is its own inverse.
constexpr std::array<std::uint8_t, 6> add_gid_mac(const std::array<std::uint8_t, 6>& mac) {
    return {mac[1], mac[0], mac[3], mac[2], mac[5], mac[4]};
}

// §4.6.5 DELETE_GID, 24 bytes.
struct DeleteGid {
    CmdqBase header;
    Le16 gid_index;  // firmware index from ADD_GID
    std::array<std::uint8_t, 6> reserved_18;
};
static_assert(sizeof(DeleteGid) == 24);
static_assert(offsetof(DeleteGid, gid_index) == 16);
static_assert(std::has_unique_object_representations_v<DeleteGid>);

// §4.6.6 CREATE_CQ, 56 bytes (48 and 64 seen).
struct CreateCq {
    CmdqBase header;     // flags: create_cq::DISABLE_CQ_OVERFLOW_DETECTION, ...; minimal 0
    Le64 cq_handle;      // returned in NQ notifications
    Le32 pg_size_lvl;    // create_cq::lvl, create_cq::pg_size
    Le32 cq_fco_cnq_id;  // create_cq::cnq_id, create_cq::cq_fco
    Le32 dpi;            // §5.8.4
    Le32 cq_size;        // 32-byte CQEs in the ring
    Le64 pbl;            // level 0: the CQ page; else the PTE/PDE page
    Le16 steering_tag;
    std::uint8_t pbl_pg_size;  // only with PBL_PG_SIZE_VALID
    std::uint8_t reserved_51;
    Le32 coalescing;  // only with COALESCING_VALID [P7]
};
static_assert(sizeof(CreateCq) == 56);
static_assert(offsetof(CreateCq, cq_handle) == 16 && offsetof(CreateCq, pg_size_lvl) == 24);
static_assert(offsetof(CreateCq, cq_fco_cnq_id) == 28 && offsetof(CreateCq, dpi) == 32);
static_assert(offsetof(CreateCq, cq_size) == 36 && offsetof(CreateCq, pbl) == 40);
static_assert(offsetof(CreateCq, steering_tag) == 48 && offsetof(CreateCq, pbl_pg_size) == 50);
static_assert(offsetof(CreateCq, coalescing) == 52);
static_assert(std::has_unique_object_representations_v<CreateCq>);

namespace create_cq {
inline constexpr Field<0, 1> DISABLE_CQ_OVERFLOW_DETECTION;
inline constexpr Field<1, 1> STEERING_TAG_VALID;
inline constexpr Field<2, 1> INFINITE_CQ_MODE;
inline constexpr Field<3, 1> COALESCING_VALID;
inline constexpr Field<4, 1> PBL_PG_SIZE_VALID;
inline constexpr Field<0, 2> lvl;       // of pg_size_lvl: PblLevel
inline constexpr Field<2, 3> pg_size;   // of pg_size_lvl: PgSize
inline constexpr Field<0, 12> cnq_id;   // of cq_fco_cnq_id: the NQ's ring id
inline constexpr Field<12, 20> cq_fco;  // of cq_fco_cnq_id: first-page offset, 0
}  // namespace create_cq

// §4.6.7 DESTROY_CQ, 24 bytes.
struct DestroyCq {
    CmdqBase header;
    Le32 cq_cid;
    std::array<std::uint8_t, 4> reserved_20;
};
static_assert(sizeof(DestroyCq) == 24);
static_assert(offsetof(DestroyCq, cq_cid) == 16);
static_assert(std::has_unique_object_representations_v<DestroyCq>);

// §4.6.12 ALLOCATE_MRW, 32 bytes; completion xid = the key.
struct AllocateMrw {
    CmdqBase header;
    Le64 mrw_handle;         // opaque
    std::uint8_t mrw_flags;  // allocate_mrw::mrw_type, STEERING_TAG_VALID
    std::uint8_t access;     // allocate_mrw::CONSUMER_OWNED_KEY
    Le16 steering_tag;
    Le32 pd_id;
};
static_assert(sizeof(AllocateMrw) == 32);
static_assert(offsetof(AllocateMrw, mrw_handle) == 16 && offsetof(AllocateMrw, mrw_flags) == 24);
static_assert(offsetof(AllocateMrw, access) == 25 && offsetof(AllocateMrw, steering_tag) == 26);
static_assert(offsetof(AllocateMrw, pd_id) == 28);
static_assert(std::has_unique_object_representations_v<AllocateMrw>);

namespace allocate_mrw {
inline constexpr Field<0, 4> mrw_type;  // MrwType
inline constexpr Field<4, 1> STEERING_TAG_VALID;
inline constexpr Field<5, 1> CONSUMER_OWNED_KEY;  // of access
}  // namespace allocate_mrw

enum class MrwType : std::uint8_t { MR = 0, PMR = 1, MW_TYPE1 = 2, MW_TYPE2A = 3, MW_TYPE2B = 4 };

// §4.6.12 DEALLOCATE_KEY, 24 bytes.
struct DeallocateKey {
    CmdqBase header;
    std::uint8_t mrw_flags;  // allocate_mrw::mrw_type
    std::array<std::uint8_t, 3> reserved_17;
    Le32 key;  // L_Key for MR/PMR, R_Key for windows
};
static_assert(sizeof(DeallocateKey) == 24);
static_assert(offsetof(DeallocateKey, mrw_flags) == 16 && offsetof(DeallocateKey, key) == 20);
static_assert(std::has_unique_object_representations_v<DeallocateKey>);

// §4.6.12 REGISTER_MR, 56 bytes upstream (48 old, 64 out-of-tree).
struct RegisterMr {
    CmdqBase header;                // flags: register_mr::ALLOC_MR, STEERING_TAG_VALID, ENABLE_RO
    std::uint8_t log2_pg_size_lvl;  // register_mr::lvl, register_mr::log2_pg_size
    std::uint8_t access;            // mr_access::* (not the QP encoding, §6.4)
    Le16 log2_pbl_pg_size;          // register_mr::log2_pbl_pg_size: 12
    Le32 key;                       // from ALLOCATE_MRW (PD id with ALLOC_MR)
    Le64 pbl;                       // level 0: the one data page (0 for a DMA MR); 1: PTE page; 2: PDE page
    Le64 va;                        // first virtual address of the region
    Le64 mr_size;                   // bytes; register_mr::mr_size_unlimited for the DMA MR
    Le16 steering_tag;
    std::array<std::uint8_t, 6> reserved_50;
};
static_assert(sizeof(RegisterMr) == 56);
static_assert(offsetof(RegisterMr, log2_pg_size_lvl) == 16 && offsetof(RegisterMr, access) == 17);
static_assert(offsetof(RegisterMr, log2_pbl_pg_size) == 18 && offsetof(RegisterMr, key) == 20);
static_assert(offsetof(RegisterMr, pbl) == 24 && offsetof(RegisterMr, va) == 32);
static_assert(offsetof(RegisterMr, mr_size) == 40 && offsetof(RegisterMr, steering_tag) == 48);
static_assert(std::has_unique_object_representations_v<RegisterMr>);

namespace register_mr {
inline constexpr Field<0, 1> ALLOC_MR;  // of flags: unified mode
inline constexpr Field<1, 1> STEERING_TAG_VALID;
inline constexpr Field<2, 1> ENABLE_RO;         // relaxed ordering; never set by the minimal driver
inline constexpr Field<0, 2> lvl;               // PblLevel
inline constexpr Field<2, 5> log2_pg_size;      // 12 (4 KiB) .. 30 (1 GiB), §6.3
inline constexpr Field<0, 5> log2_pbl_pg_size;  // 12
inline constexpr unsigned log2_pg_size_min = 12;
inline constexpr unsigned log2_pg_size_max = 30;
inline constexpr std::uint64_t mr_size_unlimited = ~std::uint64_t{0};
inline constexpr std::uint64_t max_mr_size_linux = std::uint64_t{1} << 39;  // §6.3
}  // namespace register_mr

// §6.4: REGISTER_MR.access. Not the MODIFY_QP encoding (qp_access).
namespace mr_access {
inline constexpr std::uint8_t LOCAL_WRITE = 0x01;
inline constexpr std::uint8_t REMOTE_READ = 0x02;
inline constexpr std::uint8_t REMOTE_WRITE = 0x04;
inline constexpr std::uint8_t REMOTE_ATOMIC = 0x08;
inline constexpr std::uint8_t MW_BIND = 0x10;
inline constexpr std::uint8_t ZERO_BASED = 0x20;
}  // namespace mr_access

// §4.6.12 DEREGISTER_MR, 24 bytes.
struct DeregisterMr {
    CmdqBase header;
    Le32 lkey;
    std::array<std::uint8_t, 4> reserved_20;
};
static_assert(sizeof(DeregisterMr) == 24);
static_assert(offsetof(DeregisterMr, lkey) == 16);
static_assert(std::has_unique_object_representations_v<DeregisterMr>);

// §5.2.3, §6.1: the reserved L_Key, never returned by ALLOCATE_MRW.
inline constexpr std::uint32_t reserved_lkey = 0xFFFFFFFF;

}  // namespace rig::bnxt::hsi

// §4.6.8-§4.6.11: the QP commands.
#include "rig/bnxt/hsi/rcfw_qp.hpp"

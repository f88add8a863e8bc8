// rig/bnxt/hsi/rcfw.hpp: the RoCE firmware channel (spec/bnxt-hsi.md §4): the CMDQ the
// driver fills with commands (16-byte slots, published through the BAR0 mailbox, producer
// register and trigger), the CREQ the firmware answers on (16-byte entries with a phase
// bit), side buffers for query commands, status codes, opcodes and the layout of every
// command the minimal driver sends. Layouts and codes only: no state.
//
// Growth rule (§0, §4.6.0): a command may be longer than its oldest layout (firmware and
// model treat missing trailing bytes as zero); `min_command_bytes` gives the oldest size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "rig/wire.hpp"

namespace rig::bnxt::hsi {

using rig::wire::Field;
using rig::wire::Le16;
using rig::wire::Le32;
using rig::wire::Le64;

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
inline constexpr Field<0, 16> prod_idx;   // slots ever written, modulo 2^16
inline constexpr Field<31, 1> RESET;      // set on the first write after channel start
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
inline constexpr Field<0, 6> type;  // of CreqBase.type
inline constexpr Field<0, 1> v;     // of CreqBase.v
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
    std::uint8_t type;    // CreqType::QP_EVENT
    std::uint8_t status;  // RcfwStatus
    Le16 cookie;          // the command's cookie
    Le32 xid;             // command specific (§4.6.0 "Completion xid")
    std::uint8_t v;       // phase bit
    std::uint8_t event;   // the command's opcode
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
    std::uint8_t event;                 // creq_event::QP_ERROR_NOTIFICATION
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
    Le32 max_qp;             // excludes QP1
    Le16 max_qp_wr;          // WQEs per queue (Linux uses value - 1)
    Le16 dev_cap_flags;      // query_func::RESIZE_QP, ...
    Le32 max_cq;
    Le32 max_cqe;            // CQEs per CQ
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
    Le32 max_gid;                   // hardware GID table size
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
    Le16 stats_ctx;                       // add_gid::stats_ctx_id, stats_ctx_valid; 0
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
    CmdqBase header;  // flags: create_cq::DISABLE_CQ_OVERFLOW_DETECTION, ...; minimal 0
    Le64 cq_handle;       // returned in NQ notifications
    Le32 pg_size_lvl;     // create_cq::lvl, create_cq::pg_size
    Le32 cq_fco_cnq_id;   // create_cq::cnq_id, create_cq::cq_fco
    Le32 dpi;             // §5.8.4
    Le32 cq_size;         // 32-byte CQEs in the ring
    Le64 pbl;             // level 0: the CQ page; else the PTE/PDE page
    Le16 steering_tag;
    std::uint8_t pbl_pg_size;  // only with PBL_PG_SIZE_VALID
    std::uint8_t reserved_51;
    Le32 coalescing;           // only with COALESCING_VALID [P7]
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

// §4.6.8 CREATE_QP, 104 bytes upstream (96 and 112 seen).
struct CreateQp {
    CmdqBase header;
    Le64 qp_handle;                  // returned in every CQE of this QP
    Le32 qp_flags;                   // create_qp::SRQ_USED, ...; Linux RC on P5: 0x0C
    std::uint8_t type;               // QpType
    std::uint8_t sq_pg_size_sq_lvl;  // create_qp::sq_lvl, create_qp::sq_pg_size
    std::uint8_t rq_pg_size_rq_lvl;  // create_qp::rq_lvl, create_qp::rq_pg_size
    std::uint8_t reserved_31;
    Le32 dpi;                        // §5.8.4
    Le32 sq_size;                    // static mode (P5): SQ WQEs
    Le32 rq_size;                    // RQ WQEs (0 with an SRQ)
    Le16 sq_fwo_sq_sge;              // create_qp::sq_sge, create_qp::sq_fwo
    Le16 rq_fwo_rq_sge;              // create_qp::rq_sge, create_qp::rq_fwo
    Le32 scq_cid;                    // send CQ id
    Le32 rcq_cid;                    // receive CQ id
    Le32 srq_cid;                    // with SRQ_USED
    Le32 pd_id;                      // driver-chosen; firmware only compares
    Le64 sq_pbl;                     // SQ memory: WQE ring, then the PSN search area (§5.4)
    Le64 rq_pbl;
    Le64 irrq_addr;                  // (2 x responder depth + 2) x 32 bytes
    Le64 orrq_addr;                  // (initiator depth + 1) x 32 bytes
    Le32 request_xid;                // 0
    Le16 steering_tag;               // 0
    std::array<std::uint8_t, 2> reserved_102;
};
static_assert(sizeof(CreateQp) == 104);
static_assert(offsetof(CreateQp, qp_handle) == 16 && offsetof(CreateQp, qp_flags) == 24);
static_assert(offsetof(CreateQp, type) == 28 && offsetof(CreateQp, sq_pg_size_sq_lvl) == 29);
static_assert(offsetof(CreateQp, rq_pg_size_rq_lvl) == 30 && offsetof(CreateQp, dpi) == 32);
static_assert(offsetof(CreateQp, sq_size) == 36 && offsetof(CreateQp, rq_size) == 40);
static_assert(offsetof(CreateQp, sq_fwo_sq_sge) == 44 && offsetof(CreateQp, rq_fwo_rq_sge) == 46);
static_assert(offsetof(CreateQp, scq_cid) == 48 && offsetof(CreateQp, rcq_cid) == 52);
static_assert(offsetof(CreateQp, srq_cid) == 56 && offsetof(CreateQp, pd_id) == 60);
static_assert(offsetof(CreateQp, sq_pbl) == 64 && offsetof(CreateQp, rq_pbl) == 72);
static_assert(offsetof(CreateQp, irrq_addr) == 80 && offsetof(CreateQp, orrq_addr) == 88);
static_assert(offsetof(CreateQp, request_xid) == 96 && offsetof(CreateQp, steering_tag) == 100);
static_assert(std::has_unique_object_representations_v<CreateQp>);

namespace create_qp {
inline constexpr Field<0, 1> SRQ_USED;
inline constexpr Field<1, 1> FORCE_COMPLETION;
inline constexpr Field<2, 1> RESERVED_LKEY_ENABLE;
inline constexpr Field<3, 1> FR_PMR_ENABLED;
inline constexpr Field<4, 1> VARIABLE_SIZED_WQE_ENABLED;
inline constexpr Field<5, 1> OPTIMIZED_TRANSMIT_ENABLED;
inline constexpr Field<6, 1> RESPONDER_UD_CQE_WITH_CFA;
inline constexpr Field<7, 1> EXT_STATS_ENABLED;
inline constexpr Field<8, 1> EXPRESS_MODE_ENABLED;
inline constexpr Field<9, 1> STEERING_TAG_VALID;
inline constexpr Field<10, 1> RDMA_READ_OR_ATOMICS_USED;
inline constexpr Field<0, 4> sq_lvl;       // PblLevel
inline constexpr Field<4, 4> sq_pg_size;   // PgSize
inline constexpr Field<0, 4> rq_lvl;
inline constexpr Field<4, 4> rq_pg_size;
inline constexpr Field<0, 4> sq_sge;       // max SGEs per send WQE (static mode: <= 6)
inline constexpr Field<4, 12> sq_fwo;      // first-page offset, 0
inline constexpr Field<0, 4> rq_sge;       // Linux static mode: always 6
inline constexpr Field<4, 12> rq_fwo;
inline constexpr Field<0, 24> qpn;         // the completion's xid: a 24-bit QP number
inline constexpr std::uint32_t linux_rc_flags = 0x0C;  // RESERVED_LKEY_ENABLE | FR_PMR_ENABLED
}  // namespace create_qp

enum class QpType : std::uint8_t { RC = 2, UD = 4, RAW_ETHERTYPE = 6, GSI = 7 };

// §4.6.11 DESTROY_QP and §4.6.10 QUERY_QP, 24 bytes.
struct DestroyQp {
    CmdqBase header;
    Le32 qp_cid;
    std::array<std::uint8_t, 4> reserved_20;
};
static_assert(sizeof(DestroyQp) == 24);
static_assert(offsetof(DestroyQp, qp_cid) == 16);
static_assert(std::has_unique_object_representations_v<DestroyQp>);
using QueryQp = DestroyQp;

// §4.6.9 MODIFY_QP, 144 bytes (112 seen). header.qp_type: QpType with the optimized
// modify only, else 0.
struct ModifyQp {
    CmdqBase header;  // flags: bit 0 SRQ_USED (optimized transition only)
    Le32 modify_mask;  // modify_mask::*
    Le32 qp_cid;
    std::uint8_t network_type_en_sqd_async_notify_new_state;  // modify_qp::new_state, ...
    std::uint8_t access;       // qp_access::* (not the MR encoding, §6.4)
    Le16 pkey;                 // 0xFFFF
    Le32 qkey;                 // UD/GSI only
    std::array<std::uint8_t, 16> dgid;  // wire order: byte 32 = GID byte 0
    Le32 flow_label;           // bits 19:0
    Le16 sgid_index;           // firmware GID index from ADD_GID
    std::uint8_t hop_limit;
    std::uint8_t traffic_class;
    std::array<std::uint8_t, 6> dest_mac;  // wire order
    std::uint8_t tos_dscp_tos_ecn;         // modify_qp::tos_ecn, tos_dscp
    std::uint8_t path_mtu_pingpong_push_enable;  // modify_qp::path_mtu, pingpong_push_enable
    std::uint8_t timeout;        // 4.096 us x 2^timeout
    std::uint8_t retry_cnt;      // 0..7
    std::uint8_t rnr_retry;      // 0..7, 7 = infinite
    std::uint8_t min_rnr_timer;  // IB 5-bit encoding
    Le32 rq_psn;                 // 24 bits
    Le32 sq_psn;                 // 24 bits
    std::uint8_t max_rd_atomic;       // ORRQ slots = initiator depth + 1
    std::uint8_t max_dest_rd_atomic;  // IRRQ slots = 2 x responder depth + 2
    Le16 enable_cc;
    Le32 sq_size;          // with SQ_SIZE
    Le32 rq_size;          // with RQ_SIZE
    Le16 sq_sge;           // with SQ_SGE
    Le16 rq_sge;           // with RQ_SGE
    Le32 max_inline_data;  // with MAX_INLINE_DATA
    Le32 dest_qp_id;       // remote QP number, 24 bits
    Le32 pingpong_push_dpi;
    std::array<std::uint8_t, 6> src_mac;  // with SRC_MAC
    Le16 vlan_pcp_vlan_dei_vlan_id;       // modify_qp::vlan_id, vlan_dei, vlan_pcp
    Le64 irrq_addr;        // 0
    Le64 orrq_addr;        // 0
    Le32 ext_modify_mask;  // 0
    std::array<std::uint8_t, 12> reserved_132;  // ext_stats_ctx_id, schq_id, ...: 0
};
static_assert(sizeof(ModifyQp) == 144);
static_assert(offsetof(ModifyQp, modify_mask) == 16 && offsetof(ModifyQp, qp_cid) == 20);
static_assert(offsetof(ModifyQp, network_type_en_sqd_async_notify_new_state) == 24);
static_assert(offsetof(ModifyQp, access) == 25 && offsetof(ModifyQp, pkey) == 26);
static_assert(offsetof(ModifyQp, qkey) == 28 && offsetof(ModifyQp, dgid) == 32);
static_assert(offsetof(ModifyQp, flow_label) == 48 && offsetof(ModifyQp, sgid_index) == 52);
static_assert(offsetof(ModifyQp, hop_limit) == 54 && offsetof(ModifyQp, traffic_class) == 55);
static_assert(offsetof(ModifyQp, dest_mac) == 56 && offsetof(ModifyQp, tos_dscp_tos_ecn) == 62);
static_assert(offsetof(ModifyQp, path_mtu_pingpong_push_enable) == 63 && offsetof(ModifyQp, timeout) == 64);
static_assert(offsetof(ModifyQp, retry_cnt) == 65 && offsetof(ModifyQp, rnr_retry) == 66);
static_assert(offsetof(ModifyQp, min_rnr_timer) == 67 && offsetof(ModifyQp, rq_psn) == 68);
static_assert(offsetof(ModifyQp, sq_psn) == 72 && offsetof(ModifyQp, max_rd_atomic) == 76);
static_assert(offsetof(ModifyQp, max_dest_rd_atomic) == 77 && offsetof(ModifyQp, enable_cc) == 78);
static_assert(offsetof(ModifyQp, sq_size) == 80 && offsetof(ModifyQp, rq_size) == 84);
static_assert(offsetof(ModifyQp, sq_sge) == 88 && offsetof(ModifyQp, rq_sge) == 90);
static_assert(offsetof(ModifyQp, max_inline_data) == 92 && offsetof(ModifyQp, dest_qp_id) == 96);
static_assert(offsetof(ModifyQp, pingpong_push_dpi) == 100 && offsetof(ModifyQp, src_mac) == 104);
static_assert(offsetof(ModifyQp, vlan_pcp_vlan_dei_vlan_id) == 110 && offsetof(ModifyQp, irrq_addr) == 112);
static_assert(offsetof(ModifyQp, orrq_addr) == 120 && offsetof(ModifyQp, ext_modify_mask) == 128);
static_assert(std::has_unique_object_representations_v<ModifyQp>);

// §4.6.9: modify_mask bits.
namespace modify_mask {
inline constexpr std::uint32_t STATE = 0x00000001;
inline constexpr std::uint32_t EN_SQD_ASYNC_NOTIFY = 0x00000002;
inline constexpr std::uint32_t ACCESS = 0x00000004;
inline constexpr std::uint32_t PKEY = 0x00000008;
inline constexpr std::uint32_t QKEY = 0x00000010;
inline constexpr std::uint32_t DGID = 0x00000020;
inline constexpr std::uint32_t FLOW_LABEL = 0x00000040;
inline constexpr std::uint32_t SGID_INDEX = 0x00000080;
inline constexpr std::uint32_t HOP_LIMIT = 0x00000100;
inline constexpr std::uint32_t TRAFFIC_CLASS = 0x00000200;
inline constexpr std::uint32_t DEST_MAC = 0x00000400;
inline constexpr std::uint32_t PINGPONG_PUSH_MODE = 0x00000800;
inline constexpr std::uint32_t PATH_MTU = 0x00001000;
inline constexpr std::uint32_t TIMEOUT = 0x00002000;
inline constexpr std::uint32_t RETRY_CNT = 0x00004000;
inline constexpr std::uint32_t RNR_RETRY = 0x00008000;
inline constexpr std::uint32_t RQ_PSN = 0x00010000;
inline constexpr std::uint32_t MAX_RD_ATOMIC = 0x00020000;
inline constexpr std::uint32_t MIN_RNR_TIMER = 0x00040000;
inline constexpr std::uint32_t SQ_PSN = 0x00080000;
inline constexpr std::uint32_t MAX_DEST_RD_ATOMIC = 0x00100000;
inline constexpr std::uint32_t SQ_SIZE = 0x00200000;
inline constexpr std::uint32_t RQ_SIZE = 0x00400000;
inline constexpr std::uint32_t SQ_SGE = 0x00800000;
inline constexpr std::uint32_t RQ_SGE = 0x01000000;
inline constexpr std::uint32_t MAX_INLINE_DATA = 0x02000000;
inline constexpr std::uint32_t DEST_QP_ID = 0x04000000;
inline constexpr std::uint32_t SRC_MAC = 0x08000000;
inline constexpr std::uint32_t VLAN_ID = 0x10000000;
inline constexpr std::uint32_t ENABLE_CC = 0x20000000;
inline constexpr std::uint32_t TOS_ECN = 0x40000000;
inline constexpr std::uint32_t TOS_DSCP = 0x80000000;

// §4.6.9 "RC transitions as Linux issues them".
inline constexpr std::uint32_t RESET_TO_INIT = STATE | ACCESS | PKEY;
inline constexpr std::uint32_t INIT_TO_RTR = STATE | DGID | FLOW_LABEL | SGID_INDEX | HOP_LIMIT | TRAFFIC_CLASS |
                                             DEST_MAC | PATH_MTU | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER |
                                             DEST_QP_ID | VLAN_ID;
inline constexpr std::uint32_t RTR_TO_RTS = STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_RD_ATOMIC;
static_assert(RESET_TO_INIT == 0x0000000D);
static_assert(INIT_TO_RTR == 0x141517E1);  // [CORRECTED] was 0x041517E1
static_assert(RTR_TO_RTS == 0x000AE001);
// Fields firmware rejects on RTR -> RTS (Linux removes them), and SRC_MAC on INIT -> RTR.
inline constexpr std::uint32_t NOT_ON_RTR_TO_RTS = PKEY | DGID | FLOW_LABEL | SGID_INDEX | HOP_LIMIT |
                                                   TRAFFIC_CLASS | DEST_MAC | PATH_MTU | RQ_PSN | MIN_RNR_TIMER |
                                                   MAX_DEST_RD_ATOMIC | DEST_QP_ID;
inline constexpr std::uint32_t NOT_ON_INIT_TO_RTR = SRC_MAC;
}  // namespace modify_mask

namespace modify_qp {
inline constexpr Field<0, 4> new_state;            // QpState
inline constexpr Field<4, 1> EN_SQD_ASYNC_NOTIFY;
inline constexpr Field<6, 2> network_type;         // NetworkType
inline constexpr Field<0, 1> pingpong_push_enable;
inline constexpr Field<4, 4> path_mtu;             // PathMtu
inline constexpr Field<0, 2> tos_ecn;
inline constexpr Field<2, 6> tos_dscp;
inline constexpr Field<0, 12> vlan_id;             // Linux: 0xFFF for an untagged GID
inline constexpr Field<12, 1> vlan_dei;
inline constexpr Field<13, 3> vlan_pcp;            // SL
inline constexpr Field<0, 20> flow_label;
inline constexpr Field<0, 24> psn;                 // rq_psn, sq_psn
inline constexpr Field<0, 24> dest_qp_id;
}  // namespace modify_qp

enum class QpState : std::uint8_t { RESET = 0, INIT = 1, RTR = 2, RTS = 3, SQD = 4, SQE = 5, ERR = 6 };
enum class NetworkType : std::uint8_t { ROCE_V1 = 0, ROCE_V2_IPV4 = 2, ROCE_V2_IPV6 = 3 };
enum class PathMtu : std::uint8_t { MTU_256 = 0, MTU_512 = 1, MTU_1024 = 2, MTU_2048 = 3, MTU_4096 = 4, MTU_8192 = 5 };

// §5.2.5: path MTU in bytes = 256 << code.
constexpr std::uint32_t path_mtu_bytes(PathMtu code) { return std::uint32_t{256} << static_cast<unsigned>(code); }
static_assert(path_mtu_bytes(PathMtu::MTU_2048) == 2048);

// §4.6.9: the slot counts MODIFY_QP carries for RDMA READ/atomic depths.
constexpr std::uint8_t orrq_slots(std::uint8_t initiator_depth) { return static_cast<std::uint8_t>(initiator_depth + 1); }
constexpr std::uint8_t irrq_slots(std::uint8_t responder_depth) {
    return static_cast<std::uint8_t>(2 * responder_depth + 2);
}
static_assert(orrq_slots(1) == 2 && irrq_slots(1) == 4);
inline constexpr std::size_t orrq_irrq_entry_bytes = 32;  // §4.6.8

// §6.4: MODIFY_QP.access (QUERY_QP.access). Not the REGISTER_MR encoding (mr_access).
namespace qp_access {
inline constexpr std::uint8_t LOCAL_WRITE = 0x01;
inline constexpr std::uint8_t REMOTE_WRITE = 0x02;
inline constexpr std::uint8_t REMOTE_READ = 0x04;
inline constexpr std::uint8_t REMOTE_ATOMIC = 0x08;
}  // namespace qp_access

// §4.6.10: the QUERY_QP side buffer (104 bytes).
struct QueryQpSb {
    SbHeader header;
    Le32 xid;
    std::uint8_t en_sqd_async_notify_state;  // query_qp::state, EN_SQD_ASYNC_NOTIFY
    std::uint8_t access;                     // qp_access
    Le16 pkey;
    Le32 qkey;
    std::array<std::uint8_t, 4> reserved_20;  // newer: udp_src_port
    std::array<std::uint8_t, 16> dgid;
    Le32 flow_label;
    Le16 sgid_index;
    std::uint8_t hop_limit;
    std::uint8_t traffic_class;
    std::array<std::uint8_t, 6> dest_mac;
    Le16 path_mtu_dest_vlan_id;  // query_qp::dest_vlan_id, path_mtu
    std::uint8_t timeout;
    std::uint8_t retry_cnt;
    std::uint8_t rnr_retry;
    std::uint8_t min_rnr_timer;
    Le32 rq_psn;
    Le32 sq_psn;
    std::uint8_t max_rd_atomic;       // slots
    std::uint8_t max_dest_rd_atomic;  // slots
    std::uint8_t tos_dscp_tos_ecn;
    std::uint8_t enable_cc;
    Le32 sq_size;
    Le32 rq_size;
    Le16 sq_sge;
    Le16 rq_sge;
    Le32 max_inline_data;
    Le32 dest_qp_id;
    Le16 port_id;
    std::uint8_t reserved_94;
    std::uint8_t stat_collection_id;
    std::array<std::uint8_t, 6> src_mac;
    Le16 vlan_pcp_vlan_dei_vlan_id;
};
static_assert(sizeof(QueryQpSb) == 104);
static_assert(offsetof(QueryQpSb, xid) == 8 && offsetof(QueryQpSb, en_sqd_async_notify_state) == 12);
static_assert(offsetof(QueryQpSb, access) == 13 && offsetof(QueryQpSb, pkey) == 14);
static_assert(offsetof(QueryQpSb, qkey) == 16 && offsetof(QueryQpSb, dgid) == 24);
static_assert(offsetof(QueryQpSb, flow_label) == 40 && offsetof(QueryQpSb, sgid_index) == 44);
static_assert(offsetof(QueryQpSb, hop_limit) == 46 && offsetof(QueryQpSb, traffic_class) == 47);
static_assert(offsetof(QueryQpSb, dest_mac) == 48 && offsetof(QueryQpSb, path_mtu_dest_vlan_id) == 54);
static_assert(offsetof(QueryQpSb, timeout) == 56 && offsetof(QueryQpSb, retry_cnt) == 57);
static_assert(offsetof(QueryQpSb, rnr_retry) == 58 && offsetof(QueryQpSb, min_rnr_timer) == 59);
static_assert(offsetof(QueryQpSb, rq_psn) == 60 && offsetof(QueryQpSb, sq_psn) == 64);
static_assert(offsetof(QueryQpSb, max_rd_atomic) == 68 && offsetof(QueryQpSb, max_dest_rd_atomic) == 69);
static_assert(offsetof(QueryQpSb, tos_dscp_tos_ecn) == 70 && offsetof(QueryQpSb, enable_cc) == 71);
static_assert(offsetof(QueryQpSb, sq_size) == 72 && offsetof(QueryQpSb, rq_size) == 76);
static_assert(offsetof(QueryQpSb, sq_sge) == 80 && offsetof(QueryQpSb, rq_sge) == 82);
static_assert(offsetof(QueryQpSb, max_inline_data) == 84 && offsetof(QueryQpSb, dest_qp_id) == 88);
static_assert(offsetof(QueryQpSb, port_id) == 92 && offsetof(QueryQpSb, stat_collection_id) == 95);
static_assert(offsetof(QueryQpSb, src_mac) == 96 && offsetof(QueryQpSb, vlan_pcp_vlan_dei_vlan_id) == 102);
static_assert(std::has_unique_object_representations_v<QueryQpSb>);

namespace query_qp {
inline constexpr Field<0, 4> state;  // QpState
inline constexpr Field<4, 1> EN_SQD_ASYNC_NOTIFY;
inline constexpr Field<0, 12> dest_vlan_id;
inline constexpr Field<12, 4> path_mtu;  // PathMtu
}  // namespace query_qp

// §4.6.12 ALLOCATE_MRW, 32 bytes; completion xid = the key.
struct AllocateMrw {
    CmdqBase header;
    Le64 mrw_handle;          // opaque
    std::uint8_t mrw_flags;   // allocate_mrw::mrw_type, STEERING_TAG_VALID
    std::uint8_t access;      // allocate_mrw::CONSUMER_OWNED_KEY
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
    CmdqBase header;  // flags: register_mr::ALLOC_MR, STEERING_TAG_VALID, ENABLE_RO
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
inline constexpr Field<0, 1> ALLOC_MR;            // of flags: unified mode
inline constexpr Field<1, 1> STEERING_TAG_VALID;
inline constexpr Field<2, 1> ENABLE_RO;           // relaxed ordering; never set by the minimal driver
inline constexpr Field<0, 2> lvl;                 // PblLevel
inline constexpr Field<2, 5> log2_pg_size;        // 12 (4 KiB) .. 30 (1 GiB), §6.3
inline constexpr Field<0, 5> log2_pbl_pg_size;    // 12
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

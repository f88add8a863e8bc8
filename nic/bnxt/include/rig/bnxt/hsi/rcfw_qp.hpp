// rig/bnxt/hsi/rcfw_qp.hpp: the RCFW commands on RC queue pairs (docs/hsi.md
// §4.6.8-§4.6.11): CREATE_QP, DESTROY_QP, MODIFY_QP with its mask bits, states and the
// transitions Linux issues, QUERY_QP and its side buffer, and the QP access encoding.
// The channel, the other commands and the common header are in rcfw.hpp (which includes
// this file). Layouts and codes only: no state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "rig/bnxt/hsi/rcfw.hpp"

namespace rig::bnxt::hsi {
// §4.6.8 CREATE_QP, 104 bytes upstream (96 and 112 seen).
struct CreateQp {
    CmdqBase header;
    Le64 qp_handle;                  // returned in every CQE of this QP
    Le32 qp_flags;                   // create_qp::SRQ_USED, ...; Linux RC on P5: 0x0C
    std::uint8_t type;               // QpType
    std::uint8_t sq_pg_size_sq_lvl;  // create_qp::sq_lvl, create_qp::sq_pg_size
    std::uint8_t rq_pg_size_rq_lvl;  // create_qp::rq_lvl, create_qp::rq_pg_size
    std::uint8_t reserved_31;
    Le32 dpi;            // §5.8.4
    Le32 sq_size;        // static mode (P5): SQ WQEs
    Le32 rq_size;        // RQ WQEs (0 with an SRQ)
    Le16 sq_fwo_sq_sge;  // create_qp::sq_sge, create_qp::sq_fwo
    Le16 rq_fwo_rq_sge;  // create_qp::rq_sge, create_qp::rq_fwo
    Le32 scq_cid;        // send CQ id
    Le32 rcq_cid;        // receive CQ id
    Le32 srq_cid;        // with SRQ_USED
    Le32 pd_id;          // driver-chosen; firmware only compares
    Le64 sq_pbl;         // SQ memory: WQE ring, then the PSN search area (§5.4)
    Le64 rq_pbl;
    Le64 irrq_addr;     // (2 x responder depth + 2) x 32 bytes
    Le64 orrq_addr;     // (initiator depth + 1) x 32 bytes
    Le32 request_xid;   // 0
    Le16 steering_tag;  // 0
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
inline constexpr Field<0, 4> sq_lvl;      // PblLevel
inline constexpr Field<4, 4> sq_pg_size;  // PgSize
inline constexpr Field<0, 4> rq_lvl;
inline constexpr Field<4, 4> rq_pg_size;
inline constexpr Field<0, 4> sq_sge;   // max SGEs per send WQE (static mode: <= 6)
inline constexpr Field<4, 12> sq_fwo;  // first-page offset, 0
inline constexpr Field<0, 4> rq_sge;   // Linux static mode: always 6
inline constexpr Field<4, 12> rq_fwo;
inline constexpr Field<0, 24> qpn;                     // the completion's xid: a 24-bit QP number
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
    CmdqBase header;   // flags: bit 0 SRQ_USED (optimized transition only)
    Le32 modify_mask;  // modify_mask::*
    Le32 qp_cid;
    std::uint8_t network_type_en_sqd_async_notify_new_state;  // modify_qp::new_state, ...
    std::uint8_t access;                                      // qp_access::* (not the MR encoding, §6.4)
    Le16 pkey;                                                // 0xFFFF
    Le32 qkey;                                                // UD/GSI only
    std::array<std::uint8_t, 16> dgid;                        // wire order: byte 32 = GID byte 0
    Le32 flow_label;                                          // bits 19:0
    Le16 sgid_index;                                          // firmware GID index from ADD_GID
    std::uint8_t hop_limit;
    std::uint8_t traffic_class;
    std::array<std::uint8_t, 6> dest_mac;        // wire order
    std::uint8_t tos_dscp_tos_ecn;               // modify_qp::tos_ecn, tos_dscp
    std::uint8_t path_mtu_pingpong_push_enable;  // modify_qp::path_mtu, pingpong_push_enable
    std::uint8_t timeout;                        // 4.096 us x 2^timeout
    std::uint8_t retry_cnt;                      // 0..7
    std::uint8_t rnr_retry;                      // 0..7, 7 = infinite
    std::uint8_t min_rnr_timer;                  // IB 5-bit encoding
    Le32 rq_psn;                                 // 24 bits
    Le32 sq_psn;                                 // 24 bits
    std::uint8_t max_rd_atomic;                  // ORRQ slots = initiator depth + 1
    std::uint8_t max_dest_rd_atomic;             // IRRQ slots = 2 x responder depth + 2
    Le16 enable_cc;
    Le32 sq_size;          // with SQ_SIZE
    Le32 rq_size;          // with RQ_SIZE
    Le16 sq_sge;           // with SQ_SGE
    Le16 rq_sge;           // with RQ_SGE
    Le32 max_inline_data;  // with MAX_INLINE_DATA
    Le32 dest_qp_id;       // remote QP number, 24 bits
    Le32 pingpong_push_dpi;
    std::array<std::uint8_t, 6> src_mac;        // with SRC_MAC
    Le16 vlan_pcp_vlan_dei_vlan_id;             // modify_qp::vlan_id, vlan_dei, vlan_pcp
    Le64 irrq_addr;                             // 0
    Le64 orrq_addr;                             // 0
    Le32 ext_modify_mask;                       // 0
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
inline constexpr std::uint32_t NOT_ON_RTR_TO_RTS = PKEY | DGID | FLOW_LABEL | SGID_INDEX | HOP_LIMIT | TRAFFIC_CLASS |
                                                   DEST_MAC | PATH_MTU | RQ_PSN | MIN_RNR_TIMER | MAX_DEST_RD_ATOMIC |
                                                   DEST_QP_ID;
inline constexpr std::uint32_t NOT_ON_INIT_TO_RTR = SRC_MAC;
}  // namespace modify_mask

namespace modify_qp {
inline constexpr Field<0, 4> new_state;  // QpState
inline constexpr Field<4, 1> EN_SQD_ASYNC_NOTIFY;
inline constexpr Field<6, 2> network_type;  // NetworkType
inline constexpr Field<0, 1> pingpong_push_enable;
inline constexpr Field<4, 4> path_mtu;  // PathMtu
inline constexpr Field<0, 2> tos_ecn;
inline constexpr Field<2, 6> tos_dscp;
inline constexpr Field<0, 12> vlan_id;  // Linux: 0xFFF for an untagged GID
inline constexpr Field<12, 1> vlan_dei;
inline constexpr Field<13, 3> vlan_pcp;  // SL
inline constexpr Field<0, 20> flow_label;
inline constexpr Field<0, 24> psn;  // rq_psn, sq_psn
inline constexpr Field<0, 24> dest_qp_id;
}  // namespace modify_qp

enum class QpState : std::uint8_t { RESET = 0, INIT = 1, RTR = 2, RTS = 3, SQD = 4, SQE = 5, ERR = 6 };
enum class NetworkType : std::uint8_t { ROCE_V1 = 0, ROCE_V2_IPV4 = 2, ROCE_V2_IPV6 = 3 };
enum class PathMtu : std::uint8_t { MTU_256 = 0, MTU_512 = 1, MTU_1024 = 2, MTU_2048 = 3, MTU_4096 = 4, MTU_8192 = 5 };

// §5.2.5: path MTU in bytes = 256 << code.
constexpr std::uint32_t path_mtu_bytes(PathMtu code) { return std::uint32_t{256} << static_cast<unsigned>(code); }
static_assert(path_mtu_bytes(PathMtu::MTU_2048) == 2048);

// §4.6.9: the slot counts MODIFY_QP carries for RDMA READ/atomic depths.
constexpr std::uint8_t orrq_slots(std::uint8_t initiator_depth) {
    return static_cast<std::uint8_t>(initiator_depth + 1);
}
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

}  // namespace rig::bnxt::hsi

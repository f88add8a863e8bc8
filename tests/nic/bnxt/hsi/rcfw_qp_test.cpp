// The QP commands of the RoCE firmware channel (docs/hsi.md §4.6.8-§4.6.11), each
// pinned to bytes placed at the offsets of the spec's tables by hand.
#include "rig/bnxt/hsi/rcfw_qp.hpp"

#include <gtest/gtest.h>

#include "command.hpp"

namespace rig::bnxt::hsi {
namespace {

using test::base;
using test::base_bytes;
using test::Bytes;
using test::expect_layout;

TEST(RcfwQp, CreateQpMatchesSpecTable) {
    CreateQp c{};
    c.header = base(Opcode::CREATE_QP, 104);
    c.qp_handle = 0xA1A2A3A4A5A6A7A8;
    c.qp_flags = create_qp::linux_rc_flags;
    c.type = static_cast<std::uint8_t>(QpType::RC);
    c.sq_pg_size_sq_lvl = static_cast<std::uint8_t>(create_qp::sq_lvl(1) | create_qp::sq_pg_size(0));
    c.rq_pg_size_rq_lvl = static_cast<std::uint8_t>(create_qp::rq_lvl(2) | create_qp::rq_pg_size(1));
    c.dpi = 0;
    c.sq_size = 129;
    c.rq_size = 65;
    c.sq_fwo_sq_sge = static_cast<std::uint16_t>(create_qp::sq_sge(6));
    c.rq_fwo_rq_sge = static_cast<std::uint16_t>(create_qp::rq_sge(6) | create_qp::rq_fwo(1));
    c.scq_cid = 0x31;
    c.rcq_cid = 0x32;
    c.srq_cid = 0x33;
    c.pd_id = 0x34;
    c.sq_pbl = 0x1000;
    c.rq_pbl = 0x2000;
    c.irrq_addr = 0x3000;
    c.orrq_addr = 0x4000;
    c.request_xid = 0x51;
    c.steering_tag = 0x52;
    auto b = base_bytes(104, 0x01);
    b.put(16, 8, 0xA1A2A3A4A5A6A7A8).put(24, 4, 0x0C).put(28, 1, 2).put(29, 1, 0x01).put(30, 1, 0x12);
    b.put(36, 4, 129).put(40, 4, 65).put(44, 2, 6).put(46, 2, 0x16).put(48, 4, 0x31).put(52, 4, 0x32);
    b.put(56, 4, 0x33).put(60, 4, 0x34).put(64, 8, 0x1000).put(72, 8, 0x2000).put(80, 8, 0x3000);
    b.put(88, 8, 0x4000).put(96, 4, 0x51).put(100, 2, 0x52);
    expect_layout(c, b);
    EXPECT_EQ(create_qp::linux_rc_flags, create_qp::RESERVED_LKEY_ENABLE(1) | create_qp::FR_PMR_ENABLED(1));

    DestroyQp d{};
    d.header = base(Opcode::DESTROY_QP, 24);
    d.qp_cid = 0x123456;
    expect_layout(d, base_bytes(24, 0x02).put(16, 4, 0x123456));
}

TEST(RcfwQp, ModifyQpMatchesSpecTable) {
    ModifyQp c{};
    c.header = base(Opcode::MODIFY_QP, 144);
    c.header.qp_type = 2;
    c.modify_mask = modify_mask::INIT_TO_RTR;
    c.qp_cid = 0x000102;
    c.network_type_en_sqd_async_notify_new_state =
        static_cast<std::uint8_t>(modify_qp::new_state(static_cast<std::uint8_t>(QpState::RTR)) |
                                  modify_qp::network_type(static_cast<std::uint8_t>(NetworkType::ROCE_V2_IPV4)));
    c.access = qp_access::LOCAL_WRITE | qp_access::REMOTE_READ;
    c.pkey = 0xFFFF;
    c.qkey = 0x11111111;
    c.dgid = {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
    c.flow_label = 0x12345;
    c.sgid_index = 3;
    c.hop_limit = 64;
    c.traffic_class = 0x20;
    c.dest_mac = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    c.tos_dscp_tos_ecn = static_cast<std::uint8_t>(modify_qp::tos_dscp(0x2E) | modify_qp::tos_ecn(1));
    c.path_mtu_pingpong_push_enable =
        static_cast<std::uint8_t>(modify_qp::path_mtu(static_cast<std::uint8_t>(PathMtu::MTU_2048)));
    c.timeout = 14;
    c.retry_cnt = 7;
    c.rnr_retry = 6;
    c.min_rnr_timer = 12;
    c.rq_psn = 0xABCDEF;
    c.sq_psn = 0x123456;
    c.max_rd_atomic = orrq_slots(1);
    c.max_dest_rd_atomic = irrq_slots(1);
    c.enable_cc = 1;
    c.sq_size = 0x101;
    c.rq_size = 0x102;
    c.sq_sge = 6;
    c.rq_sge = 5;
    c.max_inline_data = 96;
    c.dest_qp_id = 0x000ABC;
    c.pingpong_push_dpi = 0x77;
    c.src_mac = {0x02, 0, 0, 0, 0, 0x09};
    c.vlan_pcp_vlan_dei_vlan_id = static_cast<std::uint16_t>(modify_qp::vlan_id(0xFFF) | modify_qp::vlan_pcp(5));
    c.irrq_addr = 0x8000;
    c.orrq_addr = 0x9000;
    c.ext_modify_mask = 0x1;
    auto b = base_bytes(144, 0x03);
    b.put(7, 1, 2).put(16, 4, 0x141517E1).put(20, 4, 0x102).put(24, 1, 0x82).put(25, 1, 0x05).put(26, 2, 0xFFFF);
    b.put(28, 4, 0x11111111).put_bytes(32, {0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01});
    b.put(48, 4, 0x12345).put(52, 2, 3).put(54, 1, 64).put(55, 1, 0x20);
    b.put_bytes(56, {0x02, 0x11, 0x22, 0x33, 0x44, 0x55}).put(62, 1, 0xB9).put(63, 1, 0x30);
    b.put(64, 1, 14).put(65, 1, 7).put(66, 1, 6).put(67, 1, 12).put(68, 4, 0xABCDEF).put(72, 4, 0x123456);
    b.put(76, 1, 2).put(77, 1, 4).put(78, 2, 1).put(80, 4, 0x101).put(84, 4, 0x102).put(88, 2, 6).put(90, 2, 5);
    b.put(92, 4, 96).put(96, 4, 0xABC).put(100, 4, 0x77).put_bytes(104, {0x02, 0, 0, 0, 0, 0x09});
    b.put(110, 2, 0xAFFF).put(112, 8, 0x8000).put(120, 8, 0x9000).put(128, 4, 1);
    expect_layout(c, b);
}

TEST(RcfwQp, ModifyMaskTransitionsAreTheSpecValues) {
    EXPECT_EQ(modify_mask::RESET_TO_INIT, 0x0000000Du);
    EXPECT_EQ(modify_mask::INIT_TO_RTR, 0x141517E1u);
    EXPECT_EQ(modify_mask::RTR_TO_RTS, 0x000AE001u);
    EXPECT_EQ(modify_mask::INIT_TO_RTR & modify_mask::NOT_ON_INIT_TO_RTR, 0u);
    EXPECT_EQ(modify_mask::RTR_TO_RTS & modify_mask::NOT_ON_RTR_TO_RTS, 0u);
}

TEST(RcfwQp, QueryQpSideBufferMatchesSpecTable) {
    QueryQpSb s{};
    s.xid = 0x123456;
    s.en_sqd_async_notify_state = static_cast<std::uint8_t>(query_qp::state(3));
    s.access = 0x07;
    s.pkey = 0xFFFF;
    s.qkey = 0x01020304;
    s.dgid = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    s.flow_label = 0x5;
    s.sgid_index = 0x6;
    s.hop_limit = 7;
    s.traffic_class = 8;
    s.dest_mac = {0xA, 0xB, 0xC, 0xD, 0xE, 0xF};
    s.path_mtu_dest_vlan_id = static_cast<std::uint16_t>(query_qp::path_mtu(3) | query_qp::dest_vlan_id(0xFFF));
    s.timeout = 14;
    s.retry_cnt = 7;
    s.rnr_retry = 6;
    s.min_rnr_timer = 12;
    s.rq_psn = 0x111111;
    s.sq_psn = 0x222222;
    s.max_rd_atomic = 2;
    s.max_dest_rd_atomic = 4;
    s.tos_dscp_tos_ecn = 0x11;
    s.enable_cc = 1;
    s.sq_size = 0x31;
    s.rq_size = 0x32;
    s.sq_sge = 0x33;
    s.rq_sge = 0x34;
    s.max_inline_data = 0x35;
    s.dest_qp_id = 0x36;
    s.port_id = 0x37;
    s.stat_collection_id = 0x38;
    s.src_mac = {0x21, 0x22, 0x23, 0x24, 0x25, 0x26};
    s.vlan_pcp_vlan_dei_vlan_id = 0x0FFF;
    Bytes b(104);
    b.put(8, 4, 0x123456).put(12, 1, 3).put(13, 1, 7).put(14, 2, 0xFFFF).put(16, 4, 0x01020304);
    b.put_bytes(24, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
    b.put(40, 4, 5).put(44, 2, 6).put(46, 1, 7).put(47, 1, 8).put_bytes(48, {0xA, 0xB, 0xC, 0xD, 0xE, 0xF});
    b.put(54, 2, 0x3FFF).put(56, 1, 14).put(57, 1, 7).put(58, 1, 6).put(59, 1, 12).put(60, 4, 0x111111);
    b.put(64, 4, 0x222222).put(68, 1, 2).put(69, 1, 4).put(70, 1, 0x11).put(71, 1, 1).put(72, 4, 0x31);
    b.put(76, 4, 0x32).put(80, 2, 0x33).put(82, 2, 0x34).put(84, 4, 0x35).put(88, 4, 0x36).put(92, 2, 0x37);
    b.put(95, 1, 0x38).put_bytes(96, {0x21, 0x22, 0x23, 0x24, 0x25, 0x26}).put(102, 2, 0x0FFF);
    expect_layout(s, b);
}

}  // namespace
}  // namespace rig::bnxt::hsi

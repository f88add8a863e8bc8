// RoCE firmware channel layouts (docs/hsi.md §4), each pinned to bytes placed at the
// offsets of the spec's tables by hand.
#include "rig/bnxt/hsi/rcfw.hpp"

#include <gtest/gtest.h>

#include "command.hpp"

namespace rig::bnxt::hsi {
namespace {

using test::base;
using test::base_bytes;
using test::Bytes;
using test::expect_layout;

TEST(Rcfw, CmdqInitMatchesSpecTableAndPacksLevelAndDepth) {
    CmdqInit m{};
    m.cmdq_pbl = 0x0000'0004'0000'0000;
    m.cmdq_size_cmdq_lvl = static_cast<std::uint16_t>(cmdq_init::cmdq_size(256) | cmdq_init::cmdq_lvl(0));
    m.creq_ring_id = 0x0021;
    m.prod_idx = 0;
    // §4.2: bits 1:0 level, bits 15:2 depth: 256 slots at level 0 is 0x0400.
    expect_layout(m, Bytes(16).put(0, 8, 0x0000'0004'0000'0000).put(8, 2, 0x0400).put(10, 2, 0x21));
    EXPECT_EQ(cmdq_init::cmdq_size(8192) | cmdq_init::cmdq_lvl(1), 0x8001u);
    EXPECT_EQ(cmdq_prod::RESET(1) | cmdq_prod::prod_idx(3), 0x80000003u);
}

TEST(Rcfw, CommandHeaderMatchesSpecTable) {
    CmdqBase h = base(Opcode::QUERY_FUNC, 16);
    h.flags = 0x0102;
    h.resp_size = 10;
    h.qp_type = 2;
    h.resp_addr = 0x0000'0005'0000'0010;
    auto b = base_bytes(16, 0x83);
    b.put(2, 2, 0x0102).put(6, 1, 10).put(7, 1, 2).put(8, 8, 0x0000'0005'0000'0010);
    expect_layout(h, b);
}

TEST(Rcfw, CreqCompletionMatchesSpecTable) {
    CreqCompletion c{};
    c.type = static_cast<std::uint8_t>(CreqType::QP_EVENT);
    c.status = static_cast<std::uint8_t>(RcfwStatus::INVALID_PARAMETER);
    c.cookie = 0x8005;
    c.xid = 0x000ABCDE;
    c.v = 1;
    c.event = static_cast<std::uint8_t>(Opcode::CREATE_QP);
    expect_layout(
        c, Bytes(16).put(0, 1, 0x38).put(1, 1, 5).put(2, 2, 0x8005).put(4, 4, 0xABCDE).put(8, 1, 1).put(9, 1, 1));
    EXPECT_EQ(creq::type.of(0xF8), 0x38u);  // bits 5:0 only
}

TEST(Rcfw, QueryCompletionsMatchSpecTable) {
    CreqQueryVersionCompletion v{};
    v.type = 0x38;
    v.fw_maj = 1;
    v.fw_minor = 2;
    v.fw_bld = 3;
    v.fw_rsvd = 4;
    v.v = 1;
    v.event = 0x8B;
    v.intf_maj = 5;
    v.intf_minor = 6;
    v.intf_bld = 7;
    v.intf_rsvd = 8;
    Bytes vb(16);
    vb.put(0, 1, 0x38).put(4, 1, 1).put(5, 1, 2).put(6, 1, 3).put(7, 1, 4).put(8, 1, 1).put(9, 1, 0x8B);
    vb.put(12, 1, 5).put(13, 1, 6).put(14, 1, 7).put(15, 1, 8);
    expect_layout(v, vb);

    CreqQueryCompletion q{};
    q.type = 0x38;
    q.size = 10;
    q.v = 1;
    q.event = 0x83;
    expect_layout(q, Bytes(16).put(0, 1, 0x38).put(4, 4, 10).put(8, 1, 1).put(9, 1, 0x83));
}

TEST(Rcfw, DestroyCqAndDeregisterCompletionsMatchSpecTable) {
    CreqDestroyCqCompletion d{};
    d.type = 0x38;
    d.xid = 7;
    d.v = 1;
    d.event = 0x0A;
    d.cq_arm_lvl = 2;
    d.total_cnq_events = 0x1234;
    expect_layout(d,
                  Bytes(16).put(0, 1, 0x38).put(4, 4, 7).put(8, 1, 1).put(9, 1, 0xA).put(10, 2, 2).put(12, 2, 0x1234));

    CreqDeregisterMrCompletion m{};
    m.bound_windows = 0x55;
    expect_layout(m, Bytes(16).put(12, 4, 0x55));
    CreqDeallocateKeyCompletion k{};
    k.bound_window_info = 0x66;
    expect_layout(k, Bytes(16).put(12, 4, 0x66));
}

TEST(Rcfw, QpErrorNotificationMatchesSpecTable) {
    CreqQpErrorNotification e{};
    e.type = 0x38;
    e.status = 1;
    e.req_slow_path_state = 2;
    e.req_err_state_reason = static_cast<std::uint8_t>(ReqErrStateReason::RNR_TIMEOUT_RETRY_LIMIT);
    e.xid = 0x123456;
    e.v = 1;
    e.event = creq_event::QP_ERROR_NOTIFICATION;
    e.res_slow_path_state = 4;
    e.res_err_state_reason = static_cast<std::uint8_t>(ResErrStateReason::RX_INVALID_R_KEY);
    e.sq_cons_idx = 0x0506;
    e.rq_cons_idx = 0x0708;
    Bytes b(16);
    b.put(0, 1, 0x38).put(1, 1, 1).put(2, 1, 2).put(3, 1, 3).put(4, 4, 0x123456).put(8, 1, 1).put(9, 1, 0xC0);
    b.put(10, 1, 4).put(11, 1, 6).put(12, 2, 0x0506).put(14, 2, 0x0708);
    expect_layout(e, b);
}

// roce_hsi.h creq_cq_error_notification: type @0, status @1, cq_err_reason @2, xid @4,
// v @8, event 0xC1 @9; reasons 1..6 (requester invalid, overflow, load; responder the same).
TEST(Rcfw, CqErrorNotificationMatchesRoceHsi) {
    CreqCqErrorNotification e{};
    e.type = 0x38;
    e.cq_err_reason = static_cast<std::uint8_t>(CqErrReason::RES_CQ_OVERFLOW_ERROR);
    e.xid = 0x00ABCDEF;
    e.v = 1;
    e.event = creq_event::CQ_ERROR_NOTIFICATION;
    Bytes b(16);
    b.put(0, 1, 0x38).put(2, 1, 5).put(4, 4, 0x00ABCDEF).put(8, 1, 1).put(9, 1, 0xC1);
    expect_layout(e, b);
    EXPECT_EQ(static_cast<int>(CqErrReason::REQ_CQ_OVERFLOW_ERROR), 2);
}

TEST(Rcfw, SideBufferHeaderMatchesSpecTable) {
    SbHeader h{};
    h.opcode = 0x83;
    h.status = 0;
    h.cookie = 0x0102;
    h.flags = 0x0304;
    h.resp_size = 10;
    expect_layout(h, Bytes(8).put(0, 1, 0x83).put(2, 2, 0x0102).put(4, 2, 0x0304).put(6, 1, 10));
}

TEST(Rcfw, QueryFuncSideBufferMatchesSpecTable) {
    QueryFuncSb s{};
    s.max_mr_size = std::uint64_t{1} << 39;
    s.max_qp = 0x01010101;
    s.max_qp_wr = 0x0202;
    s.dev_cap_flags = static_cast<std::uint16_t>(query_func::MR_REGISTER_ALLOC(1));
    s.max_cq = 0x03030303;
    s.max_cqe = 0x04040404;
    s.max_pd = 0x05050505;
    s.max_sge = 6;
    s.max_srq_sge = 7;
    s.max_qp_rd_atom = 8;
    s.max_qp_init_rd_atom = 9;
    s.max_mr = 0x0A0A0A0A;
    s.max_mw = 0x0B0B0B0B;
    s.max_raw_eth_qp = 0x0C0C0C0C;
    s.max_ah = 0x0D0D0D0D;
    s.max_fmr = 0x0E0E0E0E;
    s.max_srq_wr = 0x0F0F0F0F;
    s.max_pkeys = 0x10101010;
    s.max_inline_data = 96;
    s.max_map_per_fmr = 0x11;
    s.l2_db_space_size = 0x12;
    s.max_srq = 0x1313;
    s.max_gid = 0x14141414;
    s.tqm_alloc_reqs[47] = 0x15;
    s.max_dpi = 0x16161616;
    s.max_sge_var_wqe = 0x17;
    s.dev_cap_ext_flags = static_cast<std::uint8_t>(query_func::FIXED_SIZE_WQE_DISABLED(1));
    s.max_inline_data_var_wqe = 0x1818;
    s.start_qid = 0x19191919;
    s.max_msn_table_size = 0x1A;
    s.dev_cap_ext_flags_1 = 0x1B;
    s.dev_cap_ext_flags_2 = static_cast<std::uint16_t>(query_func::MIN_RNR_RTR_RTS_OPT(1));
    Bytes b(160);
    b.put(8, 8, std::uint64_t{1} << 39).put(16, 4, 0x01010101).put(20, 2, 0x0202).put(22, 2, 0x20);
    b.put(24, 4, 0x03030303).put(28, 4, 0x04040404).put(32, 4, 0x05050505).put(36, 1, 6).put(37, 1, 7);
    b.put(38, 1, 8).put(39, 1, 9).put(40, 4, 0x0A0A0A0A).put(44, 4, 0x0B0B0B0B).put(48, 4, 0x0C0C0C0C);
    b.put(52, 4, 0x0D0D0D0D).put(56, 4, 0x0E0E0E0E).put(60, 4, 0x0F0F0F0F).put(64, 4, 0x10101010);
    b.put(68, 4, 96).put(72, 1, 0x11).put(73, 1, 0x12).put(74, 2, 0x1313).put(76, 4, 0x14141414);
    b.put(127, 1, 0x15).put(128, 4, 0x16161616).put(132, 1, 0x17).put(133, 1, 0x40).put(134, 2, 0x1818);
    b.put(136, 4, 0x19191919).put(140, 1, 0x1A).put(141, 1, 0x1B).put(142, 2, 0x1000);
    expect_layout(s, b);
}

TEST(Rcfw, InitializeFwMatchesSpecTable) {
    InitializeFw c{};
    c.header = base(Opcode::INITIALIZE_FW, 112);
    c.header.flags = static_cast<std::uint16_t>(initialize_fw::DRV_VERSION(1));
    c.qpc_pg_size_qpc_lvl = 0x01;
    c.mrw_pg_size_mrw_lvl = 0x02;
    c.srq_pg_size_srq_lvl = 0x03;
    c.cq_pg_size_cq_lvl = 0x04;
    c.tqm_pg_size_tqm_lvl = 0x05;
    c.tim_pg_size_tim_lvl = 0x06;
    c.log2_dbr_pg_size = 0x0007;
    c.qpc_page_dir = 0x1000;
    c.mrw_page_dir = 0x2000;
    c.srq_page_dir = 0x3000;
    c.cq_page_dir = 0x4000;
    c.tqm_page_dir = 0x5000;
    c.tim_page_dir = 0x6000;
    c.number_of_qp = 0x71;
    c.number_of_mrw = 0x72;
    c.number_of_srq = 0x73;
    c.number_of_cq = 0x74;
    c.max_qp_per_vf = 0x81;
    c.max_mrw_per_vf = 0x82;
    c.max_srq_per_vf = 0x83;
    c.max_cq_per_vf = 0x84;
    c.max_gid_per_vf = 0x85;
    c.stat_ctx_id = 0x99;
    auto b = base_bytes(112, 0x80);
    b.put(2, 2, 0x4).put(16, 1, 1).put(17, 1, 2).put(18, 1, 3).put(19, 1, 4).put(20, 1, 5).put(21, 1, 6);
    b.put(22, 2, 7).put(24, 8, 0x1000).put(32, 8, 0x2000).put(40, 8, 0x3000).put(48, 8, 0x4000);
    b.put(56, 8, 0x5000).put(64, 8, 0x6000).put(72, 4, 0x71).put(76, 4, 0x72).put(80, 4, 0x73).put(84, 4, 0x74);
    b.put(88, 4, 0x81).put(92, 4, 0x82).put(96, 4, 0x83).put(100, 4, 0x84).put(104, 4, 0x85).put(108, 4, 0x99);
    expect_layout(c, b);
}

TEST(Rcfw, AddGidReversesTheGidAndSwapsMacPairs) {
    const std::array<std::uint8_t, 16> gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};  // ::ffff:10.0.0.1
    const std::array<std::uint8_t, 6> mac{0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    AddGid c{};
    c.header = base(Opcode::ADD_GID, 48);
    c.gid = add_gid_bytes(gid);
    c.src_mac = add_gid_mac(mac);
    c.vlan = static_cast<std::uint16_t>(add_gid::vlan_id(5) | add_gid::tpid_sel(1) | add_gid::VLAN_EN(1));
    c.ipid = 0x0102;
    c.stats_ctx = static_cast<std::uint16_t>(add_gid::stats_ctx_id(3) | add_gid::stats_ctx_valid(1));
    auto b = base_bytes(48, 0x11);
    // §4.6.5: byte 16 = GID byte 15 ... byte 31 = GID byte 0.
    b.put_bytes(16, {1, 0, 0, 10, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    // byte 32 = MAC[1], 33 = MAC[0], 34 = MAC[3], 35 = MAC[2], 36 = MAC[5], 37 = MAC[4].
    b.put_bytes(32, {0x11, 0x02, 0x33, 0x22, 0x55, 0x44});
    b.put(38, 2, 0x9005).put(40, 2, 0x0102).put(42, 2, 0x8003);
    expect_layout(c, b);
    EXPECT_EQ(add_gid_bytes(add_gid_bytes(gid)), gid);
    EXPECT_EQ(add_gid_mac(add_gid_mac(mac)), mac);

    DeleteGid d{};
    d.header = base(Opcode::DELETE_GID, 24);
    d.gid_index = 0x0102;
    expect_layout(d, base_bytes(24, 0x12).put(16, 2, 0x0102));
}

TEST(Rcfw, CreateCqMatchesSpecTable) {
    CreateCq c{};
    c.header = base(Opcode::CREATE_CQ, 56);
    c.header.flags = static_cast<std::uint16_t>(create_cq::PBL_PG_SIZE_VALID(1));
    c.cq_handle = 0x1122334455667788;
    c.pg_size_lvl = static_cast<std::uint32_t>(create_cq::lvl(1) | create_cq::pg_size(2));
    c.cq_fco_cnq_id = static_cast<std::uint32_t>(create_cq::cnq_id(0x21) | create_cq::cq_fco(0));
    c.dpi = 0;
    c.cq_size = 65;
    c.pbl = 0x0000'0006'0000'0000;
    c.steering_tag = 0x0102;
    c.pbl_pg_size = 0x03;
    c.coalescing = 0x04050607;
    auto b = base_bytes(56, 0x09);
    // §4.6.6: pg_size_lvl bits 1:0 level, 4:2 PG code: level 1, PG 2 -> 0x9.
    b.put(2, 2, 0x10).put(16, 8, 0x1122334455667788).put(24, 4, 0x9).put(28, 4, 0x21).put(36, 4, 65);
    b.put(40, 8, 0x0000'0006'0000'0000).put(48, 2, 0x0102).put(50, 1, 3).put(52, 4, 0x04050607);
    expect_layout(c, b);

    DestroyCq d{};
    d.header = base(Opcode::DESTROY_CQ, 24);
    d.cq_cid = 0x77;
    expect_layout(d, base_bytes(24, 0x0A).put(16, 4, 0x77));
}

TEST(Rcfw, MemoryRegionCommandsMatchSpecTable) {
    AllocateMrw a{};
    a.header = base(Opcode::ALLOCATE_MRW, 32);
    a.mrw_handle = 0x0102030405060708;
    a.mrw_flags = static_cast<std::uint8_t>(allocate_mrw::mrw_type(static_cast<std::uint8_t>(MrwType::PMR)));
    a.access = static_cast<std::uint8_t>(allocate_mrw::CONSUMER_OWNED_KEY(1));
    a.steering_tag = 0x1112;
    a.pd_id = 0x21222324;
    expect_layout(a, base_bytes(32, 0x0D)
                         .put(16, 8, 0x0102030405060708)
                         .put(24, 1, 1)
                         .put(25, 1, 0x20)
                         .put(26, 2, 0x1112)
                         .put(28, 4, 0x21222324));

    RegisterMr r{};
    r.header = base(Opcode::REGISTER_MR, 56);
    r.header.flags = static_cast<std::uint16_t>(register_mr::ENABLE_RO(1));
    r.log2_pg_size_lvl = static_cast<std::uint8_t>(register_mr::lvl(2) | register_mr::log2_pg_size(12));
    r.access = mr_access::LOCAL_WRITE | mr_access::REMOTE_READ;
    r.log2_pbl_pg_size = static_cast<std::uint16_t>(register_mr::log2_pbl_pg_size(12));
    r.key = 0x00000100;
    r.pbl = 0x0000'0007'0000'0000;
    r.va = 0x0000'7F00'0000'1000;
    r.mr_size = 0x0000'0000'0040'0000;
    r.steering_tag = 0x3132;
    auto b = base_bytes(56, 0x0F);
    // §4.6.12: log2_pg_size_lvl bits 1:0 level, bits 6:2 log2 page size: level 2, 12 -> 0x32.
    b.put(2, 2, 0x4).put(16, 1, 0x32).put(17, 1, 0x03).put(18, 2, 12).put(20, 4, 0x100);
    b.put(24, 8, 0x0000'0007'0000'0000).put(32, 8, 0x0000'7F00'0000'1000).put(40, 8, 0x400000).put(48, 2, 0x3132);
    expect_layout(r, b);

    DeregisterMr d{};
    d.header = base(Opcode::DEREGISTER_MR, 24);
    d.lkey = 0x100;
    expect_layout(d, base_bytes(24, 0x10).put(16, 4, 0x100));

    DeallocateKey k{};
    k.header = base(Opcode::DEALLOCATE_KEY, 24);
    k.mrw_flags = 1;
    k.key = 0x100;
    expect_layout(k, base_bytes(24, 0x0E).put(16, 1, 1).put(20, 4, 0x100));
}

TEST(Rcfw, AccessEncodingsOfMrAndQpDiffer) {
    // §6.4: remote read and remote write swap places between the two encodings.
    EXPECT_EQ(mr_access::REMOTE_READ, qp_access::REMOTE_WRITE);
    EXPECT_EQ(mr_access::REMOTE_WRITE, qp_access::REMOTE_READ);
    EXPECT_EQ(mr_access::REMOTE_READ, 0x02);
    EXPECT_EQ(qp_access::REMOTE_READ, 0x04);
    EXPECT_EQ(mr_access::ZERO_BASED, 0x20);
}

TEST(Rcfw, StatusAndOpcodeNamesAreTheSpecNames) {
    EXPECT_EQ(name(static_cast<RcfwStatus>(3)), "INVALID_CMD");
    EXPECT_EQ(name(static_cast<RcfwStatus>(5)), "INVALID_PARAMETER");
    EXPECT_EQ(name(static_cast<RcfwStatus>(9)), "");
    EXPECT_EQ(name(static_cast<Opcode>(0x0F)), "REGISTER_MR");
    EXPECT_EQ(name(static_cast<Opcode>(0x8B)), "QUERY_VERSION");
    EXPECT_EQ(min_command_bytes(Opcode::CREATE_QP), 96u);
    EXPECT_EQ(min_command_bytes(Opcode::MODIFY_QP), 112u);
    EXPECT_EQ(min_command_bytes(Opcode::CREATE_SRQ), 0u);
}

}  // namespace
}  // namespace rig::bnxt::hsi

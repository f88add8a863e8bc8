// HWRM layouts (docs/hsi.md §3), each pinned to bytes placed at the offsets of the
// spec's tables by hand.
#include "rig/bnxt/hsi/hwrm.hpp"

#include <gtest/gtest.h>

#include "bytes.hpp"

namespace rig::bnxt::hsi {
namespace {

using test::Bytes;
using test::expect_layout;

HwrmRequestHeader header(ReqType t) {
    HwrmRequestHeader h;
    h.req_type = static_cast<std::uint16_t>(t);
    h.cmpl_ring = hwrm::cmpl_ring_none;
    h.seq_id = 0x1234;
    h.target_id = hwrm::target_id_self;
    h.resp_addr = 0x0000'0001'2345'6780;
    return h;
}

// §3.2: req_type @0, cmpl_ring @2, seq_id @4, target_id @6, resp_addr @8.
Bytes header_bytes(std::size_t n, std::uint16_t req_type) {
    Bytes b(n);
    b.put(0, 2, req_type).put(2, 2, 0xFFFF).put(4, 2, 0x1234).put(6, 2, 0xFFFF).put(8, 8, 0x0000'0001'2345'6780);
    return b;
}

TEST(Hwrm, RequestHeaderMatchesSpecTable) { expect_layout(header(ReqType::HWRM_FUNC_QCAPS), header_bytes(16, 0x0015)); }

TEST(Hwrm, ResponseHeaderAndErrorResponseMatchSpecTable) {
    HwrmErrorResponse r{};
    r.header.error_code = static_cast<std::uint16_t>(HwrmError::INVALID_PARAMS);
    r.header.req_type = 0x0050;
    r.header.seq_id = 0xBEEF;
    r.header.resp_len = 16;
    r.opaque_0 = 0xA1A2A3A4;
    r.opaque_1 = 0xB1B2;
    r.cmd_err = 0xC1;
    r.valid = 1;
    Bytes b(16);
    b.put(0, 2, 0x2).put(2, 2, 0x50).put(4, 2, 0xBEEF).put(6, 2, 16).put(8, 4, 0xA1A2A3A4).put(12, 2, 0xB1B2);
    b.put(14, 1, 0xC1).put(15, 1, 1);
    expect_layout(r, b);
}

TEST(Hwrm, ShortRequestDescriptorMatchesSpecTable) {
    HwrmShortRequest s{};
    s.req_type = 0x0193;
    s.signature = hwrm::short_signature;
    s.target_id = 0;
    s.size = 336;
    s.req_addr = 0x0000'00AB'CDEF'0000;
    Bytes b(16);
    b.put(0, 2, 0x0193).put(2, 2, 0x4321).put(4, 2, 0).put(6, 2, 336).put(8, 8, 0x0000'00AB'CDEF'0000);
    expect_layout(s, b);
}

TEST(Hwrm, VerGetRequestMatchesSpecTable) {
    VerGetRequest r{};
    r.header = header(ReqType::HWRM_VER_GET);
    r.hwrm_intf_maj = 1;
    r.hwrm_intf_min = 10;
    r.hwrm_intf_upd = 3;
    auto b = header_bytes(24, 0x0000);
    b.put(16, 1, 1).put(17, 1, 10).put(18, 1, 3);
    expect_layout(r, b);
}

TEST(Hwrm, VerGetResponseMatchesCorrectedSpecTable) {
    VerGetResponse r{};
    r.header.resp_len = 176;
    r.hwrm_intf_maj_8b = 1;
    r.hwrm_intf_min_8b = 10;
    r.hwrm_intf_upd_8b = 3;
    r.hwrm_fw_maj_8b = 0x21;
    r.dev_caps_cfg = 0x0000000C;
    r.roce_fw_8b = {0x31, 0x32, 0x33, 0x34};
    r.hwrm_fw_name = {'h', 'w', 'r', 'm'};
    r.roce_fw_name = {'r', 'o', 'c', 'e'};
    r.chip_num = 0x1750;
    r.chip_rev = 0x01;
    r.chip_metal = 0x02;
    r.chip_bond_id = 0x03;
    r.chip_platform_type = 0x00;
    r.max_req_win_len = 128;
    r.max_resp_len = 704;
    r.def_req_timeout = 500;
    r.flags = 0x2;
    r.always_1 = 1;
    r.hwrm_intf_major = 1;
    r.hwrm_intf_minor = 10;
    r.hwrm_intf_build = 3;
    r.hwrm_intf_patch = 129;
    r.hwrm_fw_major = 0x0220;
    r.roce_fw = {0x0301, 0x0302, 0x0303, 0x0304};
    r.max_ext_req_len = 0x0400;
    r.max_req_timeout = 40000;
    r.valid = 1;
    Bytes b(176);
    b.put(6, 2, 176).put(8, 1, 1).put(9, 1, 10).put(10, 1, 3).put(12, 1, 0x21).put(24, 4, 0xC);
    b.put(28, 4, 0x34333231).put_bytes(32, {'h', 'w', 'r', 'm'}).put_bytes(96, {'r', 'o', 'c', 'e'});
    b.put(112, 2, 0x1750).put(114, 1, 1).put(115, 1, 2).put(116, 1, 3).put(117, 1, 0);
    b.put(118, 2, 128).put(120, 2, 704).put(122, 2, 500).put(124, 1, 2).put(127, 1, 1);
    b.put(128, 2, 1).put(130, 2, 10).put(132, 2, 3).put(134, 2, 129).put(136, 2, 0x0220);
    b.put(160, 2, 0x0301).put(162, 2, 0x0302).put(164, 2, 0x0303).put(166, 2, 0x0304);
    b.put(168, 2, 0x0400).put(170, 2, 40000).put(175, 1, 1);
    expect_layout(r, b);
}

TEST(Hwrm, VerGetFlagAndCapabilityBitsMatchSpec) {
    EXPECT_EQ(ver_get::SHORT_CMD_SUPPORTED(1), 0x4u);
    EXPECT_EQ(ver_get::SHORT_CMD_REQUIRED(1), 0x8u);
    EXPECT_EQ(ver_get::KONG_MB_CHNL_SUPPORTED(1), 0x10u);
    EXPECT_EQ(ver_get::DEV_NOT_RDY(1), 0x1u);
    EXPECT_EQ(ver_get::EXT_VER_AVAIL(1), 0x2u);
    EXPECT_EQ(ver_get::DEV_NOT_RDY_BACKING_STORE(1), 0x4u);
}

TEST(Hwrm, FuncResetRequestMatchesSpecTable) {
    FuncResetRequest r{};
    r.header = header(ReqType::HWRM_FUNC_RESET);
    r.enables = 1;
    r.vf_id = 0x0203;
    r.func_reset_level = static_cast<std::uint8_t>(FuncResetLevel::RESETVF);
    auto b = header_bytes(24, 0x0011);
    b.put(16, 4, 1).put(20, 2, 0x0203).put(22, 1, 3);
    expect_layout(r, b);
}

TEST(Hwrm, FuncQcapsRequestAndResponseMatchSpecTable) {
    FuncQcapsRequest q{};
    q.header = header(ReqType::HWRM_FUNC_QCAPS);
    q.fid = hwrm::fid_self;
    auto qb = header_bytes(24, 0x0015);
    qb.put(16, 2, 0xFFFF);
    expect_layout(q, qb);

    FuncQcapsResponse r{};
    r.fid = 0x0102;
    r.port_id = 0x0304;
    r.flags = func_qcaps::ROCE_V1_SUPPORTED(1) | func_qcaps::ROCE_V2_SUPPORTED(1);
    r.mac_address = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    r.max_rsscos_ctx = 0x10;
    r.max_cmpl_rings = 0x11;
    r.max_tx_rings = 0x12;
    r.max_rx_rings = 0x13;
    r.max_l2_ctxs = 0x14;
    r.max_vnics = 0x15;
    r.first_vf_id = 0x16;
    r.max_vfs = 0x17;
    r.max_stat_ctx = 0x18;
    r.max_hw_ring_grps = 0x19;
    r.flags_ext = func_qcaps::DBR_PACING_SUPPORTED(1);
    r.flags_ext2 = func_qcaps::ROCE_VF_RESOURCE_MGMT_SUPPORTED(1);
    r.valid = 1;
    Bytes b(144);
    b.put(8, 2, 0x0102).put(10, 2, 0x0304).put(12, 4, 0x18);
    b.put_bytes(16, {0x02, 0x11, 0x22, 0x33, 0x44, 0x55});
    b.put(22, 2, 0x10).put(24, 2, 0x11).put(26, 2, 0x12).put(28, 2, 0x13).put(30, 2, 0x14).put(32, 2, 0x15);
    b.put(34, 2, 0x16).put(36, 2, 0x17).put(38, 2, 0x18).put(72, 4, 0x19).put(80, 4, 1u << 29);
    b.put(88, 4, 1u << 20).put(143, 1, 1);
    expect_layout(r, b);
}

TEST(Hwrm, FuncQcfgResponseMatchesSpecTable) {
    FuncQcfgResponse r{};
    r.fid = 1;
    r.port_id = 2;
    r.vlan = 3;
    r.flags = 0x4000;
    r.mac_address = {0x02, 0, 0, 0, 0, 0x07};
    r.pci_id = 0x4100;
    r.alloc_cmpl_rings = 9;
    r.admin_mtu = 1500;
    r.mru = 9000;
    r.alloc_msix = 64;
    r.l2_doorbell_bar_size_kb = 64;
    r.legacy_l2_db_size_kb = 0x55;
    r.db_page_size = 0;
    r.valid = 1;
    Bytes b(176);
    b.put(8, 2, 1).put(10, 2, 2).put(12, 2, 3).put(14, 2, 0x4000).put_bytes(16, {0x02, 0, 0, 0, 0, 0x07});
    b.put(22, 2, 0x4100).put(26, 2, 9).put(36, 2, 1500).put(38, 2, 9000).put(72, 2, 64).put(76, 2, 64);
    b.put(84, 2, 0x55).put(89, 1, 0).put(175, 1, 1);
    expect_layout(r, b);
}

TEST(Hwrm, DrvRgtrRequestAndResponseMatchSpecTable) {
    DrvRgtrRequest r{};
    r.header = header(ReqType::HWRM_FUNC_DRV_RGTR);
    r.flags = drv_rgtr::FLAGS_16BIT_VER_MODE(1);
    r.enables = drv_rgtr::ENABLES_OS_TYPE(1) | drv_rgtr::ENABLES_VER(1);
    r.os_type = drv_rgtr::os_type_other;
    r.ver_maj_8b = 1;
    r.ver_min_8b = 2;
    r.ver_upd_8b = 3;
    r.timestamp = 0x11223344;
    r.vf_req_fwd[7] = 0x80000000;
    r.async_event_fwd[0] = 0x1;
    r.ver_maj = 0x0101;
    r.ver_min = 0x0202;
    r.ver_upd = 0x0303;
    r.ver_patch = 0x0404;
    auto b = header_bytes(112, 0x001D);
    b.put(16, 4, 0x4).put(20, 4, 0x3).put(24, 2, 0x1).put(26, 1, 1).put(27, 1, 2).put(28, 1, 3);
    b.put(32, 4, 0x11223344).put(40 + 28, 4, 0x80000000).put(72, 4, 1);
    b.put(104, 2, 0x0101).put(106, 2, 0x0202).put(108, 2, 0x0303).put(110, 2, 0x0404);
    expect_layout(r, b);

    DrvRgtrResponse s{};
    s.flags = 1;
    s.valid = 1;
    expect_layout(s, Bytes(16).put(8, 4, 1).put(15, 1, 1));

    DrvUnrgtrRequest u{};
    u.header = header(ReqType::HWRM_FUNC_DRV_UNRGTR);
    u.flags = 1;
    expect_layout(u, header_bytes(24, 0x001A).put(16, 4, 1));
}

TEST(Hwrm, BackingStoreQcapsResponseMatchesSpecTable) {
    BackingStoreQcapsResponse r{};
    r.qp_max_entries = 0x01010101;
    r.qp_min_qp1_entries = 0x0202;
    r.qp_max_l2_entries = 0x0303;
    r.qp_entry_size = 0x0404;
    r.srq_max_l2_entries = 0x0505;
    r.srq_max_entries = 0x06060606;
    r.srq_entry_size = 0x0707;
    r.cq_max_l2_entries = 0x0808;
    r.cq_max_entries = 0x09090909;
    r.cq_entry_size = 0x0A0A;
    r.vnic_max_vnic_entries = 0x0B0B;
    r.vnic_max_ring_table_entries = 0x0C0C;
    r.vnic_entry_size = 0x0D0D;
    r.stat_max_entries = 0x0E0E0E0E;
    r.stat_entry_size = 0x0F0F;
    r.tqm_entry_size = 0x1010;
    r.tqm_min_entries_per_ring = 0x11111111;
    r.tqm_max_entries_per_ring = 0x12121212;
    r.mrav_max_entries = 0x13131313;
    r.mrav_entry_size = 0x1414;
    r.tim_entry_size = 0x1515;
    r.tim_max_entries = 0x16161616;
    r.mrav_num_entries_units = 0x1717;
    r.tqm_entries_multiple = 0x18;
    r.ctx_kind_initializer = 0x19;
    r.ctx_init_mask = 0x003F;
    r.qp_init_offset = 0x1A;
    r.srq_init_offset = 0x1B;
    r.cq_init_offset = 0x1C;
    r.vnic_init_offset = 0x1D;
    r.tqm_fp_rings_count = 0x1E;
    r.stat_init_offset = 0x1F;
    r.mrav_init_offset = 0x20;
    r.tqm_fp_rings_count_ext = 0x21;
    r.valid = 1;
    Bytes b(104);
    b.put(8, 4, 0x01010101).put(12, 2, 0x0202).put(14, 2, 0x0303).put(16, 2, 0x0404).put(18, 2, 0x0505);
    b.put(20, 4, 0x06060606).put(24, 2, 0x0707).put(26, 2, 0x0808).put(28, 4, 0x09090909).put(32, 2, 0x0A0A);
    b.put(34, 2, 0x0B0B).put(36, 2, 0x0C0C).put(38, 2, 0x0D0D).put(40, 4, 0x0E0E0E0E).put(44, 2, 0x0F0F);
    b.put(46, 2, 0x1010).put(48, 4, 0x11111111).put(52, 4, 0x12121212).put(56, 4, 0x13131313);
    b.put(60, 2, 0x1414).put(62, 2, 0x1515).put(64, 4, 0x16161616).put(68, 2, 0x1717).put(70, 1, 0x18);
    b.put(71, 1, 0x19).put(72, 2, 0x3F).put(74, 1, 0x1A).put(75, 1, 0x1B).put(76, 1, 0x1C).put(77, 1, 0x1D);
    b.put(78, 1, 0x1E).put(79, 1, 0x1F).put(80, 1, 0x20).put(81, 1, 0x21).put(103, 1, 1);
    expect_layout(r, b);
}

TEST(Hwrm, BackingStoreCfgRequestMatchesSpecTable) {
    BackingStoreCfgRequest r{};
    r.header = header(ReqType::HWRM_FUNC_BACKING_STORE_CFG);
    r.flags = backing_store::FLAGS_MRAV_RESERVATION_SPLIT(1);
    r.enables = 0x0000C007;
    r.pg_size_lvl[static_cast<std::size_t>(BackingStoreKind::QPC)] =
        static_cast<std::uint8_t>(backing_store::lvl(2) | backing_store::pg_size(0));
    r.pg_size_lvl[static_cast<std::size_t>(BackingStoreKind::TIM)] = 0x11;
    r.page_dir[static_cast<std::size_t>(BackingStoreKind::QPC)] = 0x1000;
    r.page_dir[static_cast<std::size_t>(BackingStoreKind::MRAV)] = 0xE000;
    r.page_dir[static_cast<std::size_t>(BackingStoreKind::TIM)] = 0xF000;
    r.qp_num_entries = 0x101;
    r.srq_num_entries = 0x102;
    r.cq_num_entries = 0x103;
    r.stat_num_entries = 0x104;
    r.tqm_sp_num_entries = 0x105;
    r.tqm_ring_num_entries[0] = 0x106;
    r.tqm_ring_num_entries[7] = 0x10D;
    r.mrav_num_entries = 0x10E;
    r.tim_num_entries = 0x10F;
    r.qp_num_qp1_entries = 0x11;
    r.qp_num_l2_entries = 0x12;
    r.qp_entry_size = 0x13;
    r.srq_num_l2_entries = 0x14;
    r.srq_entry_size = 0x15;
    r.cq_num_l2_entries = 0x16;
    r.cq_entry_size = 0x17;
    r.vnic_num_vnic_entries = 0x18;
    r.vnic_num_ring_table_entries = 0x19;
    r.vnic_entry_size = 0x1A;
    r.stat_entry_size = 0x1B;
    r.tqm_entry_size = 0x1C;
    r.mrav_entry_size = 0x1D;
    r.tim_entry_size = 0x1E;
    auto b = header_bytes(336, 0x0193);
    b.put(16, 4, 0x2).put(20, 4, 0xC007).put(24, 1, 0x02).put(39, 1, 0x11);
    b.put(40, 8, 0x1000).put(40 + 14 * 8, 8, 0xE000).put(40 + 15 * 8, 8, 0xF000);
    b.put(168, 4, 0x101).put(172, 4, 0x102).put(176, 4, 0x103).put(180, 4, 0x104).put(184, 4, 0x105);
    b.put(188, 4, 0x106).put(216, 4, 0x10D).put(220, 4, 0x10E).put(224, 4, 0x10F);
    b.put(228, 2, 0x11).put(230, 2, 0x12).put(232, 2, 0x13).put(234, 2, 0x14).put(236, 2, 0x15);
    b.put(238, 2, 0x16).put(240, 2, 0x17).put(242, 2, 0x18).put(244, 2, 0x19).put(246, 2, 0x1A);
    b.put(248, 2, 0x1B).put(250, 2, 0x1C).put(252, 2, 0x1D).put(254, 2, 0x1E);
    expect_layout(r, b);
}

TEST(Hwrm, RingAllocRequestAndResponseMatchSpecTable) {
    RingAllocRequest r{};
    r.header = header(ReqType::HWRM_RING_ALLOC);
    r.enables = 0;
    r.ring_type = static_cast<std::uint8_t>(RingType::NQ);
    r.cmpl_coal_cnt = 0x21;
    r.flags = 0x0004;
    r.page_tbl_addr = 0x0000'0002'0000'1000;
    r.fbo = 0x31;
    r.page_size = 12;
    r.page_tbl_depth = 1;
    r.length = 1024;
    r.logical_id = 3;
    r.cmpl_ring_id = 0x41;
    r.queue_id = 0x42;
    r.stat_ctx_id = 0x51;
    r.int_mode = static_cast<std::uint8_t>(IntMode::MSIX);
    r.cq_handle = 0x6162636465666768;
    r.dpi = 0x71;
    auto b = header_bytes(96, 0x0050);
    b.put(20, 1, 5).put(21, 1, 0x21).put(22, 2, 4).put(24, 8, 0x0000'0002'0000'1000).put(32, 4, 0x31);
    b.put(36, 1, 12).put(37, 1, 1).put(40, 4, 1024).put(44, 2, 3).put(46, 2, 0x41).put(48, 2, 0x42);
    b.put(64, 4, 0x51).put(76, 1, 2).put(80, 8, 0x6162636465666768).put(88, 2, 0x71);
    expect_layout(r, b);

    RingAllocResponse s{};
    s.ring_id = 0x0102;
    s.logical_ring_id = 0x0304;
    s.push_buffer_index = 5;
    s.valid = 1;
    expect_layout(s, Bytes(16).put(8, 2, 0x0102).put(10, 2, 0x0304).put(12, 1, 5).put(15, 1, 1));

    RingFreeRequest f{};
    f.header = header(ReqType::HWRM_RING_FREE);
    f.ring_type = 5;
    f.flags = 0;
    f.ring_id = 0x0102;
    f.prod_idx = 0x7;
    f.opaque = 0x99;
    expect_layout(f, header_bytes(32, 0x0051).put(16, 1, 5).put(18, 2, 0x0102).put(20, 4, 7).put(24, 4, 0x99));
}

TEST(Hwrm, StatCtxRequestsAndResponseMatchSpecTable) {
    StatCtxAllocRequest r{};
    r.header = header(ReqType::HWRM_STAT_CTX_ALLOC);
    r.stats_dma_addr = 0x0000'0003'0000'0040;
    r.update_period_ms = 1000;
    r.stat_ctx_flags = static_cast<std::uint8_t>(stat_ctx::ROCE(1));
    r.stats_dma_length = 160;
    r.flags = 0x0102;
    r.steering_tag = 0x0304;
    r.stat_ctx_id = 0x05060708;
    r.alloc_seq_id = 0x090A;
    auto b = header_bytes(48, 0x00B0);
    b.put(16, 8, 0x0000'0003'0000'0040).put(24, 4, 1000).put(28, 1, 1).put(30, 2, 160).put(32, 2, 0x0102);
    b.put(34, 2, 0x0304).put(36, 4, 0x05060708).put(40, 2, 0x090A);
    expect_layout(r, b);

    StatCtxAllocResponse s{};
    s.stat_ctx_id = 0x11223344;
    s.valid = 1;
    expect_layout(s, Bytes(16).put(8, 4, 0x11223344).put(15, 1, 1));

    StatCtxFreeRequest f{};
    f.header = header(ReqType::HWRM_STAT_CTX_FREE);
    f.stat_ctx_id = 0x11223344;
    expect_layout(f, header_bytes(24, 0x00B1).put(16, 4, 0x11223344));
}

TEST(Hwrm, ErrorCodesHaveTheSpecNames) {
    EXPECT_EQ(name(HwrmError::SUCCESS), "SUCCESS");
    EXPECT_EQ(name(HwrmError::RESOURCE_ALLOC_ERROR), "RESOURCE_ALLOC_ERROR");
    EXPECT_EQ(name(static_cast<HwrmError>(0x10)), "BUSY");
    EXPECT_EQ(name(static_cast<HwrmError>(0xFFFF)), "CMD_NOT_SUPPORTED");
    EXPECT_EQ(name(static_cast<HwrmError>(0x0777)), "");
    EXPECT_EQ(name(static_cast<ReqType>(0x0050)), "HWRM_RING_ALLOC");
    EXPECT_EQ(name(static_cast<ReqType>(0x001D)), "HWRM_FUNC_DRV_RGTR");
}

// bnxt_hsi.h hwrm_queue_qportcfg_input: flags @16, port_id @20, drv_qmap_cap @22;
// _output: max_configurable_queues @8, ..., queue_id0 @15 ... queue_id7_service_profile @30,
// valid @31 (the 32-byte layout every later one begins with).
TEST(Hwrm, QueueQportcfgMatchesBnxtHsi) {
    QueueQportcfgRequest q{};
    q.header = header(ReqType::HWRM_QUEUE_QPORTCFG);
    q.flags = 1;
    q.port_id = 0x0203;
    q.drv_qmap_cap = 4;
    Bytes qb = header_bytes(24, 0x0030);
    qb.put(16, 4, 1).put(20, 2, 0x0203).put(22, 1, 4);
    expect_layout(q, qb);
    QueueQportcfgResponse r{};
    r.max_configurable_queues = 8;
    r.max_configurable_lossless_queues = 2;
    r.queue_id_service_profile[0] = 0x10;   // queue_id0
    r.queue_id_service_profile[15] = 0x21;  // queue_id7_service_profile
    r.valid = 1;
    Bytes rb(32);
    rb.put(8, 1, 8).put(9, 1, 2).put(15, 1, 0x10).put(30, 1, 0x21).put(31, 1, 1);
    expect_layout(r, rb);
}

}  // namespace
}  // namespace rig::bnxt::hsi

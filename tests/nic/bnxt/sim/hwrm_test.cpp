// The model's HWRM channel (docs/hsi.md §3): requests assembled at the offsets of
// the spec's tables, written through the BAR0 window, answered by DMA.
#include <gtest/gtest.h>

#include <functional>

#include "harness.hpp"

namespace rig::bnxt::sim::test {
namespace {

TEST(BnxtModelHwrm, VerGetAnswersP5ChipAndModelValues) {
    Node n(1, {}, Boot::None);
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0000).put(16, 1, 1).put(17, 1, 10).put(18, 1, 3));
    ASSERT_EQ(r.size(), 176u);           // §3.6 [CORRECTED] 176 bytes
    EXPECT_EQ(get(r, 0, 2), 0u);         // error_code SUCCESS
    EXPECT_EQ(get(r, 2, 2), 0x0000u);    // req_type echoed
    EXPECT_EQ(get(r, 4, 2), 0x100u);     // seq_id echoed
    EXPECT_EQ(get(r, 8, 1), 1u);         // hwrm_intf_maj_8b
    EXPECT_EQ(get(r, 9, 1), 10u);        // hwrm_intf_min_8b
    EXPECT_EQ(get(r, 24, 4), 0x4u);      // dev_caps_cfg: SHORT_CMD_SUPPORTED
    EXPECT_EQ(get(r, 112, 2), 0x1750u);  // chip_num
    EXPECT_EQ(get(r, 118, 2), 128u);     // max_req_win_len
    EXPECT_EQ(get(r, 120, 2), 704u);     // max_resp_len
    EXPECT_EQ(get(r, 122, 2), 500u);     // def_req_timeout
    EXPECT_EQ(get(r, 124, 1), 0x2u);     // flags: EXT_VER_AVAIL
    EXPECT_EQ(get(r, 127, 1), 1u);       // always_1
    EXPECT_EQ(get(r, 128, 2), 1u);       // hwrm_intf_major
    EXPECT_EQ(get(r, 130, 2), 10u);      // hwrm_intf_minor
    EXPECT_EQ(get(r, 168, 2), 1024u);    // max_ext_req_len
    EXPECT_EQ(get(r, 175, 1), 1u);       // valid
}

// The body with valid = 0 (seq_id and resp_len, bytes 4..7, last, as one 4-byte write the
// driver's poll acquires), then the valid byte alone.
TEST(BnxtModelHwrm, ResponseBodyGoesFirstWithValidZeroThenValidByteAlone) {
    Node n;
    n.bus.log_writes(true);
    ASSERT_FALSE(n.hwrm(Msg(24).put(0, 2, 0x0011)).empty());  // FUNC_RESET
    const auto writes = n.bus.writes();
    ASSERT_EQ(writes.size(), 4u);
    EXPECT_EQ(writes[0].address, n.resp);
    EXPECT_EQ(writes[0].bytes, 4u);
    EXPECT_EQ(writes[1].address, n.resp + 8);
    EXPECT_EQ(writes[1].bytes, 8u);
    EXPECT_EQ(writes[2].address, n.resp + 4);
    EXPECT_EQ(writes[2].bytes, 4u);
    EXPECT_EQ(writes[3].address, n.resp + 15);
    EXPECT_EQ(writes[3].bytes, 1u);
}

TEST(BnxtModelHwrm, FuncQcapsReportsRoceAndTheMac) {
    Node n(7);
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0015).put(16, 2, 0xFFFF));
    ASSERT_EQ(r.size(), 144u);
    EXPECT_EQ(get(r, 12, 4) & 0x18, 0x18u);  // ROCE_V1_SUPPORTED | ROCE_V2_SUPPORTED
    EXPECT_EQ(get(r, 16, 1), 0x02u);
    EXPECT_EQ(get(r, 21, 1), 7u);  // mac_address, first octet at 16
    EXPECT_GT(get(r, 24, 2), 0u);  // max_cmpl_rings
    EXPECT_EQ(get(r, 143, 1), 1u);
}

TEST(BnxtModelHwrm, FuncQcfgReportsMsixVectorsAndMac) {
    Node n(9);
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0016).put(16, 2, 0xFFFF));
    ASSERT_EQ(r.size(), 176u);
    EXPECT_EQ(get(r, 21, 1), 9u);
    EXPECT_EQ(get(r, 72, 2), 16u);  // alloc_msix = ModelOptions::msix_vectors
}

TEST(BnxtModelHwrm, FuncQcapsOfAnotherFunctionIsInvalidParams) {
    Node n;
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0015).put(16, 2, 0x0003));
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(get(r, 0, 2), 0x2u);
}

TEST(BnxtModelHwrm, DriverRegisterAndUnregisterSucceed) {
    Node n;
    const Bytes r = n.hwrm(Msg(112).put(0, 2, 0x001D).put(16, 4, 0x4).put(20, 4, 0x1).put(24, 2, 0x1));
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(get(r, 0, 2), 0u);
    const Bytes u = n.hwrm(Msg(24).put(0, 2, 0x001A));
    ASSERT_EQ(u.size(), 16u);
    EXPECT_EQ(get(u, 0, 2), 0u);
}

TEST(BnxtModelHwrm, RingAllocGivesNonZeroIdsAndRingFreeTakesThem) {
    Node n;
    const Ring a = n.ring_alloc(64, 0);
    const Ring b = n.ring_alloc(1024, 1);  // two pages: a PTE page (depth 1)
    EXPECT_NE(a.id, 0u);
    EXPECT_NE(a.id, b.id);
    EXPECT_NE(a.id, 0xFFFFu);
    const Bytes f = n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, a.id));
    ASSERT_EQ(f.size(), 16u);
    EXPECT_EQ(get(f, 0, 2), 0u);
    const Bytes again = n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, a.id));
    EXPECT_EQ(get(again, 0, 2), 0x2u);  // INVALID_PARAMS: no such ring
}

TEST(BnxtModelHwrm, RingAllocRefusesWhatTheModelCannotRun) {
    Node n;
    const std::uint64_t page = n.bus.alloc(4096);
    auto alloc = [&](std::uint8_t type, std::uint32_t length, std::uint16_t vector, std::uint8_t depth) {
        return get(n.hwrm(Msg(96)
                              .put(0, 2, 0x0050)
                              .put(20, 1, type)
                              .put(24, 8, page)
                              .put(37, 1, depth)
                              .put(40, 4, length)
                              .put(44, 2, vector)
                              .put(76, 1, 2)),
                   0, 2);
    };
    EXPECT_EQ(alloc(1, 64, 0, 0), 0x2u);   // a TX ring: not modelled
    EXPECT_EQ(alloc(5, 100, 0, 0), 0x2u);  // length not a power of two
    EXPECT_EQ(alloc(5, 64, 16, 0), 0x2u);  // MSI-X vector beyond the 16 the function has
    EXPECT_EQ(alloc(5, 64, 0, 2), 0x2u);   // page_tbl_depth 2
    EXPECT_EQ(alloc(5, 64, 15, 0), 0x0u);
}

TEST(BnxtModelHwrm, StatCtxAllocAndFree) {
    Node n;
    const Bytes a = n.hwrm(Msg(48).put(0, 2, 0x00B0).put(28, 1, 1));
    ASSERT_EQ(a.size(), 16u);
    const auto id = get(a, 8, 4);
    EXPECT_NE(id, 0u);
    EXPECT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x00B1).put(16, 4, id)), 0, 2), 0u);
    EXPECT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x00B1).put(16, 4, id)), 0, 2), 0x2u);
}

TEST(BnxtModelHwrm, FuncResetForgetsRingsTheRegistrationAndTheContextMemory) {
    Node n;
    const Ring a = n.ring_alloc(64, 0);
    ASSERT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x0011)), 0, 2), 0u);
    EXPECT_EQ(get(n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, a.id)), 0, 2), 0x3u);  // not registered
    ASSERT_EQ(n.boot(), 0);
    EXPECT_EQ(get(n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, a.id)), 0, 2), 0x2u);  // no such ring
}

// The order of §7.1 (Linux's bnxt_fw_init_one_p1/_p2): VER_GET first (else FAIL), then the
// registration before rings and statistics contexts (RESOURCE_ACCESS_DENIED), then the
// context memory (RESOURCE_ALLOC_ERROR); what Linux sends before registering is accepted.
TEST(BnxtModelHwrm, CommandsBeforeVerGetFail) {
    Node n(1, {}, Boot::None);
    for (std::uint16_t type :
         std::initializer_list<std::uint16_t>{0x0011, 0x0015, 0x0016, 0x001D, 0x0050, 0x00B0, 0x0192}) {
        const Bytes r = n.hwrm(Msg(112).put(0, 2, type).put(16, 2, 0xFFFF));
        ASSERT_EQ(r.size(), 16u) << type;
        EXPECT_EQ(get(r, 0, 2), 0x1u) << type;  // FAIL
        EXPECT_EQ(get(r, 2, 2), type);
    }
    EXPECT_EQ(n.hwrm(Msg(24).put(0, 2, 0x0000)).size(), 176u);
    EXPECT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x0015).put(16, 2, 0xFFFF)), 0, 2), 0u);
}

TEST(BnxtModelHwrm, RingsAndStatisticsBeforeDriverRegistrationAreAccessDenied) {
    Node n(1, {}, Boot::None);
    ASSERT_FALSE(n.hwrm(Msg(24).put(0, 2, 0x0000)).empty());
    const std::uint64_t page = n.bus.alloc(4096);
    auto ring_alloc = [&] {
        return get(n.hwrm(Msg(96).put(0, 2, 0x0050).put(20, 1, 5).put(24, 8, page).put(40, 4, 64).put(76, 1, 2)), 0, 2);
    };
    auto stat_alloc = [&] { return get(n.hwrm(Msg(48).put(0, 2, 0x00B0).put(28, 1, 1)), 0, 2); };
    EXPECT_EQ(ring_alloc(), 0x3u);
    EXPECT_EQ(stat_alloc(), 0x3u);
    EXPECT_EQ(get(n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, 0x40)), 0, 2), 0x3u);  // RING_FREE
    EXPECT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x00B1).put(16, 4, 1)), 0, 2), 0x3u);                   // STAT_CTX_FREE
    EXPECT_EQ(get(n.hwrm(Msg(40).put(0, 2, 0x0017)), 0, 2), 0x3u);                                 // FUNC_CFG
    // Linux's bnxt_hwrm_func_qcaps asks these before it registers.
    EXPECT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x0016).put(16, 2, 0xFFFF)), 0, 2), 0u);
    EXPECT_EQ(n.hwrm(Msg(16).put(0, 2, 0x0192)).size(), 104u);
    EXPECT_EQ(n.hwrm(Msg(24).put(0, 2, 0x0030)).size(), 32u);
    ASSERT_EQ(get(n.hwrm(Msg(112).put(0, 2, 0x001D).put(16, 4, 0x4).put(20, 4, 0x3)), 0, 2), 0u);
    EXPECT_EQ(ring_alloc(), 0x4u);  // RESOURCE_ALLOC_ERROR: no context memory yet
    EXPECT_EQ(stat_alloc(), 0x4u);
    EXPECT_EQ(get(n.hwrm_short(n.backing_store_cfg(16, 16, 16)), 0, 2), 0u);
    EXPECT_EQ(ring_alloc(), 0u);
    EXPECT_EQ(stat_alloc(), 0u);
}

TEST(BnxtModelHwrm, QueueQportcfgReportsTheCosQueues) {
    ModelOptions o;
    o.cos_queues = 4;
    Node n(1, o);
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0030));
    ASSERT_EQ(r.size(), 32u);
    EXPECT_EQ(get(r, 8, 1), 4u);   // max_configurable_queues
    EXPECT_EQ(get(r, 21, 1), 3u);  // queue_id3
    EXPECT_EQ(get(r, 31, 1), 1u);
}

// §3.1: without SHORT_CMD_SUPPORTED the firmware reads the descriptor as a request: its
// cmpl_ring is the signature, so INVALID_PARAMS, answered at the descriptor's req_addr.
TEST(BnxtModelHwrm, ShortRequestWhereShortModeIsNotAdvertisedIsInvalidParams) {
    ModelOptions o;
    o.short_commands = false;
    Node n(1, o, Boot::None);
    const Bytes v = n.hwrm(Msg(24).put(0, 2, 0x0000));
    ASSERT_EQ(v.size(), 176u);
    EXPECT_EQ(get(v, 24, 4), 0u);   // dev_caps_cfg
    EXPECT_EQ(get(v, 168, 2), 0u);  // max_ext_req_len
    const std::uint64_t req = n.bus.alloc(4096);
    Msg d(16);
    d.put(0, 2, 0x0015).put(2, 2, 0x4321).put(6, 2, 24).put(8, 8, req);
    for (std::size_t i = 0; i < 128; i += 4) n.w32(i, static_cast<std::uint32_t>(i < 16 ? get(d.b, i, 4) : 0));
    n.w32(0x100, 1);
    n.settle();
    EXPECT_EQ(n.bus.get(req, 2), 0x2u);         // INVALID_PARAMS
    EXPECT_EQ(n.bus.get(req + 2, 2), 0x0015u);  // for FUNC_QCAPS
}

TEST(BnxtModelHwrm, ShortRequestLongerThanMaxExtReqLenIsInvalidParams) {
    ModelOptions o;
    o.max_ext_req_len = 256;
    Node n(1, o, Boot::None);
    ASSERT_FALSE(n.hwrm(Msg(24).put(0, 2, 0x0000)).empty());
    ASSERT_EQ(get(n.hwrm(Msg(112).put(0, 2, 0x001D).put(16, 4, 0x4).put(20, 4, 0x3)), 0, 2), 0u);
    Msg full = n.backing_store_cfg(16, 16, 16);
    const Bytes r = n.hwrm_short(full);
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(get(r, 0, 2), 0x2u);
    // The first 256 bytes (Linux's BNXT_BACKING_STORE_CFG_LEGACY_LEN) are taken.
    full.b.resize(256);
    EXPECT_EQ(get(n.hwrm_short(full), 0, 2), 0u);
}

TEST(BnxtModelHwrm, UnknownCommandIsCmdNotSupported) {
    Node n;
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0190));  // FUNC_RESOURCE_QCAPS: not modelled
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(get(r, 0, 2), 0xFFFFu);
    EXPECT_EQ(get(r, 2, 2), 0x0190u);
}

TEST(BnxtModelHwrm, CompletionRingOtherThanNoneIsInvalidParams) {
    Node n;
    Msg m(24);
    m.put(0, 2, 0x0000);
    // Assemble by hand with cmpl_ring = 3 (the harness would write 0xFFFF).
    m.put(2, 2, 3).put(4, 2, 0x77).put(6, 2, 0xFFFF).put(8, 8, n.resp);
    for (std::size_t i = 0; i < 128; i += 4) n.w32(i, static_cast<std::uint32_t>(i < 24 ? get(m.b, i, 4) : 0));
    n.w32(0x100, 1);
    n.settle();
    EXPECT_EQ(n.bus.get(n.resp, 2), 0x2u);
    EXPECT_EQ(n.bus.get(n.resp + 4, 2), 0x77u);
}

TEST(BnxtModelHwrm, WindowAccessOfAnotherWidthIsCountedAndDropped) {
    Node n(1, {}, Boot::None);
    n.nic.write(0, 0x0, 8, 0x1122334455667788);
    n.nic.write(0, 0x4, 2, 0x1234);
    EXPECT_EQ(n.nic.read(0, 0x0, 8), ~std::uint64_t{0});
    EXPECT_EQ(n.r32(0x0), 0u);
    EXPECT_EQ(n.counters().bar_width_faults, 3u);
}

TEST(BnxtModelHwrm, FirmwareStatusIsHealthyAndUnmappedOffsetsReadAllOnes) {
    Node n;
    EXPECT_EQ(n.r32(0x520) & 0xFFFF, 0x8000u);
    EXPECT_EQ(n.r32(0x2000), 0xFFFFFFFFu);
    EXPECT_EQ(n.counters().bar_unmapped, 1u);
}

TEST(BnxtModelHwrm, ShortModeRequestIsFetchedByDma) {
    Node n;
    // §3.1: the full request in DMA memory, the 16-byte descriptor in the window.
    const std::uint64_t req = n.bus.alloc(4096);
    Msg full(24);
    full.put(0, 2, 0x0015).put(2, 2, 0xFFFF).put(4, 2, 0x4242).put(6, 2, 0xFFFF).put(8, 8, n.resp).put(16, 2, 0xFFFF);
    n.bus.poke(req, full.b);
    Msg d(16);
    d.put(0, 2, 0x0015).put(2, 2, 0x4321).put(4, 2, 0).put(6, 2, 24).put(8, 8, req);
    for (std::size_t i = 0; i < 16; i += 4) n.w32(i, static_cast<std::uint32_t>(get(d.b, i, 4)));
    n.w32(0x100, 1);
    n.settle();
    EXPECT_EQ(n.bus.get(n.resp + 6, 2), 144u);
    EXPECT_EQ(n.bus.get(n.resp + 4, 2), 0x4242u);
    EXPECT_EQ(n.bus.get(n.resp + 143, 1), 1u);
}

TEST(BnxtModelHwrm, RefusedCommandAnswersTheChosenErrorThenRecovers) {
    Node n;
    n.faults.refuse(hsi::ReqType::HWRM_FUNC_QCAPS, hsi::HwrmError::RESOURCE_ACCESS_DENIED, 2);
    for (int i = 0; i < 2; ++i) {
        const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0015).put(16, 2, 0xFFFF));
        ASSERT_EQ(r.size(), 16u);
        EXPECT_EQ(get(r, 0, 2), 0x3u);
    }
    EXPECT_EQ(n.hwrm(Msg(24).put(0, 2, 0x0015).put(16, 2, 0xFFFF)).size(), 144u);
}

TEST(BnxtModelHwrm, DroppedCommandGetsNoResponse) {
    Node n;
    n.faults.drop(hsi::ReqType::HWRM_VER_GET);
    EXPECT_TRUE(n.hwrm(Msg(24).put(0, 2, 0x0000)).empty());
    EXPECT_EQ(n.bus.get(n.resp + 6, 2), 0u);  // nothing written at all
    EXPECT_EQ(n.hwrm(Msg(24).put(0, 2, 0x0000)).size(), 176u);
}

TEST(BnxtModelHwrm, StaleCommandAnswersWithThePreviousSequenceNumber) {
    Node n;
    n.faults.stale(hsi::ReqType::HWRM_VER_GET);
    const std::uint16_t s = n.seq;
    EXPECT_TRUE(n.hwrm(Msg(24).put(0, 2, 0x0000)).empty());  // seq_id does not match
    EXPECT_EQ(n.bus.get(n.resp + 4, 2), static_cast<std::uint16_t>(s - 1));
    EXPECT_EQ(n.bus.get(n.resp + 6, 2), 176u);
    EXPECT_EQ(n.bus.get(n.resp + 175, 1), 1u);
}

TEST(BnxtModelHwrm, TruncatedResponseIsShorterThanTheCommands) {
    Node n;
    n.faults.truncate(hsi::ReqType::HWRM_VER_GET);
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0000));
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(get(r, 0, 2), 0u);
}

TEST(BnxtModelHwrm, BackingStoreQcapsReportsTheCaps) {
    Node n;
    const Bytes q = n.hwrm(Msg(16).put(0, 2, 0x0192));
    ASSERT_EQ(q.size(), 104u);
    EXPECT_EQ(get(q, 8, 4), 1089u);  // qp_max_entries
    EXPECT_EQ(get(q, 16, 2), 832u);  // qp_entry_size
    EXPECT_EQ(get(q, 48, 4), 64u);   // tqm_min_entries_per_ring
    EXPECT_EQ(get(q, 68, 2), 1u);    // mrav_num_entries_units
    EXPECT_EQ(get(q, 78, 1), 0u);    // tqm_fp_rings_count: QUEUE_QPORTCFG's
}

// §3.11: each enabled kind within QCAPS's figures, with its entry size, a PG code, a level
// that holds it and a readable, VALID page directory; else INVALID_PARAMS (INVALID_ENABLES,
// INVALID_FLAGS), and the function stays without context memory.
TEST(BnxtModelHwrm, BackingStoreCfgRefusesWhatTheChipCannotUse) {
    Node n(1, {}, Boot::None);
    ASSERT_FALSE(n.hwrm(Msg(24).put(0, 2, 0x0000)).empty());
    ASSERT_EQ(get(n.hwrm(Msg(112).put(0, 2, 0x001D).put(16, 4, 0x4).put(20, 4, 0x3)), 0, 2), 0u);
    auto cfg = [&](const std::function<void(Msg&)>& spoil) {
        Msg m = n.backing_store_cfg(16, 16, 16);
        spoil(m);
        return get(n.hwrm_short(m), 0, 2);
    };
    EXPECT_EQ(cfg([](Msg& m) { m.put(168, 4, 2000); }), 0x2u);                // QPs above qp_max_entries
    EXPECT_EQ(cfg([](Msg& m) { m.put(230, 2, 65); }), 0x2u);                  // L2 QPs above qp_max_l2_entries
    EXPECT_EQ(cfg([](Msg& m) { m.put(228, 2, 0); }), 0x2u);                   // no QP1
    EXPECT_EQ(cfg([](Msg& m) { m.put(232, 2, 512); }), 0x2u);                 // another QP entry size
    EXPECT_EQ(cfg([](Msg& m) { m.put(176, 4, 70000); }), 0x2u);               // CQs above cq_max_entries
    EXPECT_EQ(cfg([](Msg& m) { m.put(184, 4, 32); }), 0x2u);                  // TQM below its minimum
    EXPECT_EQ(cfg([](Msg& m) { m.put(220, 4, 0xFFFF0000); }), 0x2u);          // MRs above mrav_max_entries
    EXPECT_EQ(cfg([](Msg& m) { m.put(16, 4, 0); }), 0x5u);                    // units set, no split: INVALID_FLAGS
    EXPECT_EQ(cfg([](Msg& m) { m.put(24, 1, 3); }), 0x2u);                    // QP level 3
    EXPECT_EQ(cfg([](Msg& m) { m.put(24, 1, 0x61); }), 0x2u);                 // QP page size code 6
    EXPECT_EQ(cfg([](Msg& m) { m.put(24, 1, 0); }), 0x2u);                    // QP level 0: 66 pages in one
    EXPECT_EQ(cfg([](Msg& m) { m.put(40, 8, 0); }), 0x2u);                    // no QP page directory
    EXPECT_EQ(cfg([](Msg& m) { m.put(40, 8, get(m.b, 40, 8) + 8); }), 0x2u);  // unaligned
    EXPECT_EQ(cfg([&](Msg& m) { m.put(40, 8, 0x7000'0000'0000); }), 0x2u);    // nothing there: the read faults
    EXPECT_EQ(cfg([&](Msg& m) { n.bus.put(get(m.b, 40, 8) + 8, 8, 0x1000); }), 0x2u);  // a PTE without VALID
    EXPECT_EQ(cfg([](Msg& m) { m.put(20, 4, get(m.b, 20, 4) | 0x2); }), 0x6u);         // SRQ: no size reported
    EXPECT_EQ(cfg([](Msg& m) { m.put(20, 4, get(m.b, 20, 4) | 0x10000); }), 0x6u);     // TQM ring 8
    // Refused: nothing was configured, so no ring can be made.
    EXPECT_EQ(get(n.hwrm(Msg(48).put(0, 2, 0x00B0).put(28, 1, 1)), 0, 2), 0x4u);
    EXPECT_EQ(cfg([](Msg&) {}), 0u);
    EXPECT_EQ(get(n.hwrm(Msg(48).put(0, 2, 0x00B0).put(28, 1, 1)), 0, 2), 0u);
}

// The RoCE objects fit in what BACKING_STORE_CFG gave: 2 QPs, 3 CQs, 4 MRs here; the next
// of each is RESOURCES (§4.5.2) though QUERY_FUNC allows more.
TEST(BnxtModelHwrm, RoceObjectsBeyondTheirContextMemoryAreRefused) {
    Node n(1, {}, Boot::None);
    ASSERT_EQ(n.boot(2, 3, 4), 0);
    n.up();
    std::vector<Cq> cqs;
    for (int i = 0; i < 3; ++i) cqs.push_back(n.create_cq(64));
    Msg cq(56);
    cq.put(0, 1, spec::op_create_cq).put(16, 8, 1).put(28, 4, n.nq.id).put(36, 4, 64).put(40, 8, n.bus.alloc(4096));
    EXPECT_EQ(n.rcfw(cq)->status, 2);
    n.create_qp(cqs[0], cqs[0], 8, 8);
    n.create_qp(cqs[1], cqs[1], 8, 8);
    EXPECT_THROW(n.create_qp(cqs[2], cqs[2], 8, 8), std::runtime_error);
    for (int i = 0; i < 4; ++i) n.dma_mr(spec::mr_local_write);
    const auto a = n.rcfw(Msg(32).put(0, 1, spec::op_allocate_mrw).put(24, 1, 1).put(28, 4, 1));
    EXPECT_EQ(a->status, 2);
}
}  // namespace
}  // namespace rig::bnxt::sim::test

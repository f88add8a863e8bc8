// The model's HWRM channel (spec/bnxt-hsi.md §3): requests assembled at the offsets of
// the spec's tables, written through the BAR0 window, answered by DMA.
#include <gtest/gtest.h>

#include "harness.hpp"

namespace rig::bnxt::sim::test {
namespace {

TEST(BnxtModelHwrm, VerGetAnswersP5ChipAndModelValues) {
    Node n;
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0000).put(16, 1, 1).put(17, 1, 10).put(18, 1, 3));
    ASSERT_EQ(r.size(), 176u);                 // §3.6 [CORRECTED] 176 bytes
    EXPECT_EQ(get(r, 0, 2), 0u);               // error_code SUCCESS
    EXPECT_EQ(get(r, 2, 2), 0x0000u);          // req_type echoed
    EXPECT_EQ(get(r, 4, 2), 0x100u);           // seq_id echoed
    EXPECT_EQ(get(r, 8, 1), 1u);               // hwrm_intf_maj_8b
    EXPECT_EQ(get(r, 9, 1), 10u);              // hwrm_intf_min_8b
    EXPECT_EQ(get(r, 24, 4), 0u);              // dev_caps_cfg: direct mode
    EXPECT_EQ(get(r, 112, 2), 0x1750u);        // chip_num
    EXPECT_EQ(get(r, 118, 2), 128u);           // max_req_win_len
    EXPECT_EQ(get(r, 120, 2), 704u);           // max_resp_len
    EXPECT_EQ(get(r, 122, 2), 500u);           // def_req_timeout
    EXPECT_EQ(get(r, 124, 1), 0x2u);           // flags: EXT_VER_AVAIL
    EXPECT_EQ(get(r, 127, 1), 1u);             // always_1
    EXPECT_EQ(get(r, 128, 2), 1u);             // hwrm_intf_major
    EXPECT_EQ(get(r, 130, 2), 10u);            // hwrm_intf_minor
    EXPECT_EQ(get(r, 175, 1), 1u);             // valid
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
    EXPECT_EQ(get(r, 21, 1), 7u);            // mac_address, first octet at 16
    EXPECT_GT(get(r, 24, 2), 0u);            // max_cmpl_rings
    EXPECT_EQ(get(r, 143, 1), 1u);
}

TEST(BnxtModelHwrm, FuncQcfgReportsMsixVectorsAndMac) {
    Node n(9);
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0016).put(16, 2, 0xFFFF));
    ASSERT_EQ(r.size(), 176u);
    EXPECT_EQ(get(r, 21, 1), 9u);
    EXPECT_EQ(get(r, 72, 2), 16u);  // alloc_msix = Options::msix_vectors
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
        return get(n.hwrm(Msg(96).put(0, 2, 0x0050).put(20, 1, type).put(24, 8, page).put(37, 1, depth)
                              .put(40, 4, length).put(44, 2, vector).put(76, 1, 2)),
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

TEST(BnxtModelHwrm, FuncResetForgetsRings) {
    Node n;
    const Ring a = n.ring_alloc(64, 0);
    ASSERT_EQ(get(n.hwrm(Msg(24).put(0, 2, 0x0011)), 0, 2), 0u);
    EXPECT_EQ(get(n.hwrm(Msg(32).put(0, 2, 0x0051).put(16, 1, 5).put(18, 2, a.id)), 0, 2), 0x2u);
}

TEST(BnxtModelHwrm, UnknownCommandIsCmdNotSupported) {
    Node n;
    const Bytes r = n.hwrm(Msg(24).put(0, 2, 0x0030));  // QUEUE_QPORTCFG: not modelled
    ASSERT_EQ(r.size(), 16u);
    EXPECT_EQ(get(r, 0, 2), 0xFFFFu);
    EXPECT_EQ(get(r, 2, 2), 0x0030u);
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
    Node n;
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

TEST(BnxtModelHwrm, BackingStoreQcapsAndCfgAreAccepted) {
    Node n;
    const Bytes q = n.hwrm(Msg(16).put(0, 2, 0x0192));
    ASSERT_EQ(q.size(), 104u);
    EXPECT_GT(get(q, 8, 4), 0u);  // qp_max_entries
    // §3.11: a prefix of the 336-byte CFG (older firmware accepts a shorter prefix).
    EXPECT_EQ(get(n.hwrm(Msg(128).put(0, 2, 0x0193)), 0, 2), 0u);
}

}  // namespace
}  // namespace rig::bnxt::sim::test

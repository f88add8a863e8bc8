// SQ/RQ WQE layouts, SGEs and PSN search entries (docs/hsi.md §5.1-§5.4), pinned to
// bytes placed at the offsets of the spec's tables by hand.
#include "rig/bnxt/hsi/wqe.hpp"

#include <gtest/gtest.h>

#include "bytes.hpp"

namespace rig::bnxt::hsi {
namespace {

using test::Bytes;
using test::expect_layout;

TEST(Wqe, SendHeaderMatchesSpecTable) {
    SqSendWqe w{};
    w.wqe_type = static_cast<std::uint8_t>(WqeType::SEND_WITH_IMMEDIATE);
    w.flags = static_cast<std::uint8_t>(wqe_flags::SIGNAL_COMP(1) | wqe_flags::SE(1));
    w.wqe_size = wqe_size_sges(2);
    w.inv_key_or_imm_data = 0xDEADBEEF;
    w.length = 5000;
    w.q_key = 0x11;
    w.dst_qp = 0x22;
    w.avid = 0x33;
    Bytes b(32);
    b.put(0, 1, 0x01).put(1, 1, 0x09).put(2, 1, 4).put(4, 4, 0xDEADBEEF).put(8, 4, 5000).put(12, 4, 0x11);
    b.put(16, 4, 0x22).put(20, 4, 0x33);
    expect_layout(w, b);
}

TEST(Wqe, RdmaHeaderMatchesSpecTableOfTheWriteExample) {
    // §7.3 step 1: RDMA_WRITE, SIGNAL_COMP, 1 SGE, 64 bytes to R with rkB.
    SqRdmaWqe w{};
    w.wqe_type = static_cast<std::uint8_t>(WqeType::RDMA_WRITE);
    w.flags = static_cast<std::uint8_t>(wqe_flags::SIGNAL_COMP(1));
    w.wqe_size = wqe_size_sges(1);
    w.length = 64;
    w.remote_va = 0x0000'1234'5678'9000;
    w.remote_key = 0x00000A00;
    Bytes b(32);
    b.put(0, 1, 0x04).put(1, 1, 0x01).put(2, 1, 0x03).put(8, 4, 64).put(16, 8, 0x0000'1234'5678'9000);
    b.put(24, 4, 0xA00);
    expect_layout(w, b);
}

TEST(Wqe, SgeMatchesSpecTable) {
    Sge s{};
    s.va_or_pa = 0x0000'0008'0000'0123;
    s.l_key = 0x0000'0100;
    s.size = 4096;
    expect_layout(s, Bytes(16).put(0, 8, 0x0000'0008'0000'0123).put(8, 4, 0x100).put(12, 4, 4096));
}

TEST(Wqe, RecvHeaderMatchesSpecTable) {
    RqWqe w{};
    w.wqe_type = static_cast<std::uint8_t>(WqeType::RECV);
    w.wqe_size = wqe_size_sges(1);
    w.wr_id[0] = static_cast<std::uint32_t>(rq_wqe::wr_id(0xABCDE));
    expect_layout(w, Bytes(32).put(0, 1, 0x80).put(2, 1, 3).put(8, 4, 0xABCDE));
}

TEST(Wqe, PsnSearchEntryMatchesSpecTableOfTheWriteExample) {
    // §7.3 step 2: start PSN | (0x04 << 24); next PSN = start + 1; start_slot_idx = 8p (p = 5).
    SqPsnSearchExt e{};
    e.opcode_start_psn = static_cast<std::uint32_t>(psn_search::start_psn(0x123456) | psn_search::opcode(0x04));
    e.flags_next_psn = static_cast<std::uint32_t>(psn_search::next_psn(0x123457));
    e.start_slot_idx = 40;
    expect_layout(e, Bytes(16).put(0, 4, 0x04123456).put(4, 4, 0x00123457).put(8, 2, 40));
}

TEST(Wqe, PsnSearchStrideIs16BytesAfterTheRing) {
    // B23: the stride is 16 bytes (shift 4), not 1 << ilog2+1; entries start after 128 x sq_size.
    EXPECT_EQ(psn_search_offset(65, 0), 65u * 128u);
    EXPECT_EQ(psn_search_offset(65, 64) - psn_search_offset(65, 63), 16u);
    EXPECT_EQ(psn_search_offset(1000, 999), 1000u * 128u + 999u * 16u);
}

TEST(Wqe, WqeSizeCountsSixteenByteSlots) {
    // B23: a 48-byte inline payload is 3 slots, not rounded to 32-byte units.
    EXPECT_EQ(wqe_size_inline(48), 5);
    EXPECT_EQ(wqe_size_inline(49), 6);
    EXPECT_EQ(wqe_size_inline(wqe::max_inline_bytes), wqe::slots);
    EXPECT_EQ(wqe_size_sges(wqe::max_sges), wqe::slots);
}

TEST(Wqe, NpktsIsCeilingOfLengthOverMtuAtLeastOne) {
    EXPECT_EQ(npkts(0, 2048), 1u);
    EXPECT_EQ(npkts(1, 2048), 1u);
    EXPECT_EQ(npkts(2048, 2048), 1u);
    EXPECT_EQ(npkts(2049, 2048), 2u);
    EXPECT_EQ(npkts(std::uint64_t{64} << 20, 4096), 16384u);
}

}  // namespace
}  // namespace rig::bnxt::hsi

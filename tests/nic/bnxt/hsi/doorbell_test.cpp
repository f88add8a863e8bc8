// The 64-bit doorbell (docs/hsi.md §5.8), pinned to words worked out by hand from the
// table of §5.8.1 and the examples of §7.3.
#include "rig/bnxt/hsi/doorbell.hpp"

#include <gtest/gtest.h>

#include "rig/bnxt/hsi/regs.hpp"

namespace rig::bnxt::hsi {
namespace {

// §5.8.1 "as two 32-bit words": word 0 = index | epoch << 24 | toggle << 25;
// word 1 = xid | path << 24 | valid << 26 | type << 28.
std::uint64_t words(std::uint32_t index, std::uint32_t epoch, std::uint32_t xid, std::uint32_t type) {
    const std::uint64_t w0 = index | (epoch << 24);
    const std::uint64_t w1 = xid | (0u << 24) | (1u << 26) | (type << 28);
    return w0 | (w1 << 32);
}

TEST(Doorbell, SqDoorbellOfTheWriteExample) {
    // §7.3 step 4: low word p | sq_epoch << 24, high word qpn | 1 << 26 | 0x0 << 28.
    EXPECT_EQ(encode(DbType::SQ, 0x12, 5, 0), words(5, 0, 0x12, 0x0));
    EXPECT_EQ(encode(DbType::SQ, 0x12, 0, 1), words(0, 1, 0x12, 0x0));
}

TEST(Doorbell, CqDoorbellEpochIsInverseOfExpectedPhase) {
    // §7.3 step 6: low word c | (1 - cq_phase) << 24, high word cq_id | 1 << 26 | 0x4 << 28.
    const std::uint32_t cq_phase = 0;  // after one wrap
    EXPECT_EQ(encode(DbType::CQ, 3, 17, 1 - cq_phase), words(17, 1, 3, 0x4));
}

TEST(Doorbell, EveryTypeLandsInBits63To60) {
    for (unsigned t : {0x0u, 0x1u, 0x4u, 0x5u, 0x6u, 0x7u, 0xAu, 0xBu}) {
        const auto v = encode(static_cast<DbType>(t), 0xFFFFF, 0xFFFFFF, 1);
        EXPECT_EQ(v >> 60, t);
        EXPECT_EQ(v, words(0xFFFFFF, 1, 0xFFFFF, t));
    }
}

TEST(Doorbell, FieldsBeyondTheirWidthAreDropped) {
    EXPECT_EQ(encode(DbType::RQ, 0x1FFFFF, 0x1FFFFFF, 3), words(0xFFFFFF, 1, 0xFFFFF, 0x1));
}

TEST(Doorbell, DecodeTakesEveryFieldApart) {
    const Doorbell d = decode(encode(DbType::CQ_ARMALL, 0x4321, 0x654321, 1) | db::toggle(2));
    EXPECT_EQ(d.type, DbType::CQ_ARMALL);
    EXPECT_EQ(d.path, DbPath::ROCE);
    EXPECT_EQ(d.xid, 0x4321u);
    EXPECT_EQ(d.index, 0x654321u);
    EXPECT_EQ(d.epoch, 1);
    EXPECT_EQ(d.toggle, 2);
    EXPECT_TRUE(d.valid);
    EXPECT_FALSE(decode(0).valid);
}

TEST(Doorbell, PrivilegedPageIsAtTheSpecOffsets) {
    EXPECT_EQ(bar2::doorbell_page_pf, 0x10000u);
    EXPECT_EQ(bar2::doorbell_page_vf, 0x4000u);
    EXPECT_EQ(bar0::cmdq_prod, 0x60Cu);
    EXPECT_EQ(bar0::cmdq_trigger, 0x700u);
    EXPECT_EQ(bar0::hwrm_trigger, 0x100u);
    EXPECT_EQ(bar0::fw_status, 0x520u);
}

}  // namespace
}  // namespace rig::bnxt::hsi

// Ring arithmetic at every wrap boundary (rig/bnxt/detail/ring.hpp; docs/hsi.md §0,
// §5.5.4, §5.8.2; docs/bugs.md B21): ring sizes 64, 65, 128, 129 and 1000, whose doorbells
// drivers of this NIC have got wrong after a wrap. Expected values are worked by hand
// from the spec's rules, not computed by the code under test.
#include "rig/bnxt/detail/ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace rig::bnxt::detail {
namespace {

using hsi::DbType;

class RingSizes : public ::testing::TestWithParam<std::uint32_t> {};
INSTANTIATE_TEST_SUITE_P(B21, RingSizes, ::testing::Values(64u, 65u, 128u, 129u, 1000u));

// A position after `n` single steps.
RingPosition stepped(std::uint32_t size, std::uint32_t n) {
    RingPosition p(size);
    for (std::uint32_t i = 0; i < n; ++i) p.advance();
    return p;
}

TEST_P(RingSizes, FirstPassHasEpochZeroAndExpectsPhaseOne) {
    const std::uint32_t size = GetParam();
    const RingPosition p = stepped(size, size - 1);
    EXPECT_EQ(p.index(), size - 1);
    EXPECT_EQ(p.epoch(), 0u);
    EXPECT_EQ(p.phase(), 1u);
}

TEST_P(RingSizes, WrapToZeroFlipsEpochAndPhase) {
    const std::uint32_t size = GetParam();
    const RingPosition p = stepped(size, size);
    EXPECT_EQ(p.index(), 0u);
    EXPECT_EQ(p.epoch(), 1u);
    EXPECT_EQ(p.phase(), 0u);
}

TEST_P(RingSizes, SecondWrapFlipsEpochBack) {
    const std::uint32_t size = GetParam();
    const RingPosition before = stepped(size, 2 * size - 1);
    EXPECT_EQ(before.index(), size - 1);
    EXPECT_EQ(before.epoch(), 1u);
    const RingPosition after = stepped(size, 2 * size);
    EXPECT_EQ(after.index(), 0u);
    EXPECT_EQ(after.epoch(), 0u);
    EXPECT_EQ(after.phase(), 1u);
}

// B21 (a): MORI masked the wrap count with the shifted bit, so the epoch stuck after the
// first wrap. The third wrap must give epoch 1 again.
TEST_P(RingSizes, ThirdWrapGivesEpochOneAgain) {
    const std::uint32_t size = GetParam();
    const RingPosition p = stepped(size, 3 * size + 1);
    EXPECT_EQ(p.index(), 1u);
    EXPECT_EQ(p.epoch(), 1u);
}

TEST_P(RingSizes, AdvanceByManyEqualsSingleSteps) {
    const std::uint32_t size = GetParam();
    for (std::uint32_t n : {1u, size - 1, size, size + 1, 2 * size + 3, 5 * size}) {
        RingPosition jumped(size);
        jumped.advance(n);
        EXPECT_EQ(jumped, stepped(size, n)) << "n = " << n;
    }
}

// §7.3 step 6: the CQ doorbell after the consumer wraps: low word c | (1 - cq_phase) << 24,
// high word cq_id | 1 << 26 | 0x4 << 28. For CQ 3 at index 0 after one wrap (phase 0):
// 0x4400'0003'0100'0000; before it, at index size - 1: 0x4400'0003'0000'0000 | (size - 1).
TEST_P(RingSizes, CqDoorbellAroundTheWrapCarriesTheInverseOfThePhase) {
    const std::uint32_t size = GetParam();
    EXPECT_EQ(stepped(size, size - 1).doorbell(DbType::CQ, 3), 0x4400'0003'0000'0000ull | (size - 1));
    EXPECT_EQ(stepped(size, size).doorbell(DbType::CQ, 3), 0x4400'0003'0100'0000ull);
    EXPECT_EQ(stepped(size, size + 1).doorbell(DbType::CQ, 3), 0x4400'0003'0100'0001ull);
    EXPECT_EQ(stepped(size, 2 * size).doorbell(DbType::CQ, 3), 0x4400'0003'0000'0000ull);
}

// §7.3 step 4: the SQ producer doorbell of QP 0x12 (type 0), epoch flipping on each wrap.
TEST_P(RingSizes, SqDoorbellAroundTheWrap) {
    const std::uint32_t size = GetParam();
    EXPECT_EQ(stepped(size, 1).doorbell(DbType::SQ, 0x12), 0x0400'0012'0000'0001ull);
    EXPECT_EQ(stepped(size, size).doorbell(DbType::SQ, 0x12), 0x0400'0012'0100'0000ull);
    EXPECT_EQ(stepped(size, 2 * size + 2).doorbell(DbType::SQ, 0x12), 0x0400'0012'0000'0002ull);
}

// §0, §5.5.4: a producer writes each entry with its phase (1 on the first pass, flipping
// on its wraps); the consumer takes an entry iff the toggle equals the phase it expects.
// Over three passes, every entry is taken exactly once and the entry after the last one
// written (left from the previous pass) never reads as new.
TEST_P(RingSizes, ConsumerTakesEachEntryOnceAcrossThreePasses) {
    const std::uint32_t size = GetParam();
    std::vector<std::uint8_t> toggles(size, 0);  // a zeroed ring: nothing new for phase 1
    RingPosition producer(size), consumer(size);
    std::uint32_t taken = 0;
    for (std::uint32_t written = 0; written < 3 * size; ++written) {
        toggles[producer.index()] = static_cast<std::uint8_t>(producer.phase());
        producer.advance();
        ASSERT_EQ(toggles[consumer.index()], consumer.phase()) << "entry " << written;
        consumer.advance();
        ++taken;
        EXPECT_NE(toggles[consumer.index()], consumer.phase()) << "a stale entry read as new after " << written;
    }
    EXPECT_EQ(taken, 3 * size);
}

// §5.5.1: a requester CQE's sq_cons_idx names the WQE after the one it completes, modulo
// sq_size; the driver's running count moves by the distance.
TEST_P(RingSizes, CompletedUntilFollowsTheIndexAcrossTheWrap) {
    const std::uint32_t size = GetParam();
    EXPECT_EQ(completed_until(0, 1, size), 1u);
    EXPECT_EQ(completed_until(size - 1, 0, size), size);              // the WQE at size - 1 wraps the index
    EXPECT_EQ(completed_until(size - 2, 1, size), size + 1);          // two WQEs, across the wrap
    EXPECT_EQ(completed_until(3 * size + 5, 9, size), 3 * size + 9);  // many passes later
    EXPECT_EQ(completed_until(7, 7 + size, size), 7u);                // an index beyond size is taken mod size
}

}  // namespace
}  // namespace rig::bnxt::detail

// Claims (rig/pci/claim.hpp): what a claim covers, who is named, and what is kept while a
// claim covers it (docs/bugs.md, B18).
#include "rig/pci/claim.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "rig/pci/machine.hpp"

namespace rig::pci {
namespace {

std::shared_ptr<Claims> fresh() { return std::make_shared<Claims>(); }

TEST(Claims, AClaimedSpanNamesItsHolderAndTheOverlap) {
    auto claims = fresh();
    const Span spans[] = {{0x1000, 0x2000}, {0x8000, 0x1000}};
    const Claim claim = claims->claim(spans, "the device region of 12 KiB of NIC 0000:03:00.0");
    const auto c = claims->claimed({0x2800, 0x1000});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->by, "the device region of 12 KiB of NIC 0000:03:00.0");
    EXPECT_EQ(c->span, (Span{0x2800, 0x800}));
    const auto second = claims->claimed({0x7000, 0x2000});
    ASSERT_TRUE(second);
    EXPECT_EQ(second->span, (Span{0x8000, 0x1000}));
}

TEST(Claims, BytesBesideAClaimAreNotClaimed) {
    auto claims = fresh();
    const Span span{0x1000, 0x1000};
    const Claim claim = claims->claim({&span, 1}, "r");
    EXPECT_FALSE(claims->claimed({0x0, 0x1000}));
    EXPECT_FALSE(claims->claimed({0x2000, 0x1000}));
    EXPECT_TRUE(claims->claimed({0x1fff, 1}));
}

TEST(Claims, ADroppedOrDestroyedClaimClaimsNothing) {
    auto claims = fresh();
    const Span span{0x1000, 0x1000};
    Claim a = claims->claim({&span, 1}, "a");
    a.drop();
    EXPECT_FALSE(a);
    EXPECT_FALSE(claims->claimed(span));
    { const Claim b = claims->claim({&span, 1}, "b"); }
    EXPECT_FALSE(claims->claimed(span));
}

TEST(Claims, AMovedClaimStaysUntilItsNewOwnerDropsIt) {
    auto claims = fresh();
    const Span span{0x1000, 0x1000};
    Claim a = claims->claim({&span, 1}, "a");
    Claim b = std::move(a);
    a.drop();  // the moved-from claim holds nothing
    EXPECT_TRUE(claims->claimed(span));
    b = Claim{};
    EXPECT_FALSE(claims->claimed(span));
}

TEST(Claims, AKeptObjectGoesWithTheLastClaimOverIt) {
    auto claims = fresh();
    const Span first{0x1000, 0x1000}, second{0x1800, 0x1000};
    Claim a = claims->claim({&first, 1}, "a");
    Claim b = claims->claim({&second, 1}, "b");
    auto object = std::make_shared<int>(7);
    const std::weak_ptr<int> watch = object;
    const Span kept{0x1000, 0x2000};
    claims->keep({&kept, 1}, std::move(object));
    EXPECT_EQ(claims->kept(), 1u);
    a.drop();
    EXPECT_FALSE(watch.expired()) << "b still covers part of it";
    b.drop();
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(claims->kept(), 0u);
}

TEST(Claims, AnObjectNoClaimCoversGoesAtOnce) {
    auto claims = fresh();
    auto object = std::make_shared<int>(7);
    const std::weak_ptr<int> watch = object;
    const Span span{0x1000, 0x1000};
    claims->keep({&span, 1}, std::move(object));
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(claims->kept(), 0u);
}

TEST(Claims, CopiesOfAMachineShareItsClaimsAndTwoMachinesDoNot) {
    const Machine one = Machine::at("/nonexistent"), copy = one, other = Machine::at("/nonexistent");
    const Span span{0x1000, 0x1000};
    const Claim claim = one.claims().claim({&span, 1}, "r");
    EXPECT_TRUE(copy.claims().claimed(span));
    EXPECT_FALSE(other.claims().claimed(span));
}

}  // namespace
}  // namespace rig::pci

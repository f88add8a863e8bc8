// Page-list entries and page-size codes (docs/hsi.md §2).
#include "rig/bnxt/hsi/pbl.hpp"

#include <gtest/gtest.h>

#include "bytes.hpp"

namespace rig::bnxt::hsi {
namespace {

TEST(Pbl, PteOfLastRingPageSetsValidAndLast) {
    // §2.1: bit 0 VALID, bit 1 LAST, bit 2 NEXT_TO_LAST, bits 63:12 the page.
    EXPECT_EQ(encode_pte(0x0000'0012'3456'7000, true, false), 0x0000'0012'3456'7003u);
    EXPECT_EQ(encode_pte(0x0000'0012'3456'7000, false, true), 0x0000'0012'3456'7005u);
    EXPECT_EQ(encode_pte(0x0000'0012'3456'7000), 0x0000'0012'3456'7001u);
}

TEST(Pbl, PteDropsAddressBitsBelowThePage) {
    EXPECT_EQ(encode_pte(0x5FFF), 0x5001u);
    EXPECT_EQ(pte::address_mask & 0x0123'4567'89AB'CDEFu, 0x0123'4567'89AB'C000u);
}

TEST(Pbl, PteTableHolds512EntriesPerPage) {
    EXPECT_EQ(pte::entries_per_page, 512u);
    EXPECT_EQ(std::size_t{1} << pte::entries_per_page_log2, pte::entries_per_page);
}

TEST(Pbl, PgCodesGiveTheSpecPageSizes) {
    // §2.3 table "PG": 0 4K, 1 8K, 2 64K, 3 2M, 4 8M, 5 1G.
    EXPECT_EQ(pg_size_log2(0), 12u);
    EXPECT_EQ(pg_size_log2(1), 13u);
    EXPECT_EQ(pg_size_log2(2), 16u);
    EXPECT_EQ(pg_size_log2(3), 21u);
    EXPECT_EQ(pg_size_log2(4), 23u);
    EXPECT_EQ(pg_size_log2(5), 30u);
    EXPECT_EQ(pg_size_log2(6), 0u);
}

}  // namespace
}  // namespace rig::bnxt::hsi

// Page lists of regions and queues (rig/bnxt/detail/page_list.hpp; docs/hsi.md §2.1,
// §2.2, §6.2, §6.3): the level a size needs, the page size a region's runs allow, and the
// table bytes, pinned to PTEs and PDEs assembled by hand and walked by §6.2's translation.
#include "rig/bnxt/detail/page_list.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace rig::bnxt::detail {
namespace {

using hsi::PblLevel;

pci::Run run(std::uint64_t address, std::uint64_t bytes) { return pci::Run{pci::DmaAddress{address}, bytes}; }

std::uint64_t entry(const std::vector<std::byte>& table, std::size_t index) {
    std::uint64_t value = 0;
    for (std::size_t b = 0; b < 8; ++b) value |= std::to_integer<std::uint64_t>(table[index * 8 + b]) << (8 * b);
    return value;
}

// §6.2 step 3, written from the spec table: the data page of page index i, reading the
// table bytes as the NIC reads the memory behind `base`.
std::uint64_t translate(PblLevel level, std::uint64_t base, const std::vector<std::uint64_t>& table_addresses,
                        const std::vector<std::byte>& table, std::uint64_t i) {
    auto read64 = [&](std::uint64_t address) {
        for (std::size_t j = 0; j < table_addresses.size(); ++j)
            if (address >= table_addresses[j] && address < table_addresses[j] + 4096)
                return entry(table, j * 512 + (address - table_addresses[j]) / 8);
        ADD_FAILURE() << "the list names " << std::hex << address << ", outside its table pages";
        return std::uint64_t{0};
    };
    switch (level) {
    case PblLevel::LVL_0: return base;
    case PblLevel::LVL_1: return read64(base + 8 * i) & ~0xFFFull;
    case PblLevel::LVL_2: {
        const std::uint64_t pde = read64(base + 8 * (i >> 9));
        return read64((pde & ~0xFFFull) + 8 * (i & 511)) & ~0xFFFull;
    }
    }
    return 0;
}

std::vector<std::uint64_t> scattered_pages(std::size_t n) {
    std::vector<std::uint64_t> pages;
    for (std::size_t i = 0; i < n; ++i) pages.push_back(0x8000'0000 + (n - i) * 0x3000);  // descending, gapped
    return pages;
}

TEST(RegionPageList, LevelIsZeroForOnePageOneUpTo512TwoBeyond) {
    EXPECT_EQ(pbl_level(1), PblLevel::LVL_0);
    EXPECT_EQ(pbl_level(2), PblLevel::LVL_1);
    EXPECT_EQ(pbl_level(512), PblLevel::LVL_1);
    EXPECT_EQ(pbl_level(513), PblLevel::LVL_2);
    EXPECT_EQ(pbl_level(262144), PblLevel::LVL_2);
    EXPECT_FALSE(pbl_level(262145));
    EXPECT_FALSE(pbl_level(0));
}

TEST(RegionPageList, TablePagesCountThePdePageAndEachPtePage) {
    EXPECT_EQ(table_pages(PblLevel::LVL_0, 1), 0u);
    EXPECT_EQ(table_pages(PblLevel::LVL_1, 512), 1u);
    EXPECT_EQ(table_pages(PblLevel::LVL_2, 513), 3u);
    EXPECT_EQ(table_pages(PblLevel::LVL_2, 16384), 33u);  // 64 MiB of 4 KiB pages
}

TEST(RegionPageList, PageShiftIs4KiBForScatteredPages) {
    const std::vector<pci::Run> runs = {run(0x10000, 0x1000), run(0x5000, 0x2000)};
    EXPECT_EQ(region_page_shift(0x10000, runs), 12u);
}

TEST(RegionPageList, PageShiftIs2MiBWhereRunsAndAddressAllowIt) {
    const std::vector<pci::Run> runs = {run(0x4000'0000, 0x40'0000), run(0x20'0000, 0x20'0000)};
    EXPECT_EQ(region_page_shift(0x7f00'0000'0000, runs), 21u);
}

TEST(RegionPageList, PageShiftIsBoundedByTheAddressAlignment) {
    const std::vector<pci::Run> runs = {run(0x4000'0000, 0x4000'0000)};
    EXPECT_EQ(region_page_shift(0x1000, runs), 12u);
    EXPECT_EQ(region_page_shift(0x10000, runs), 16u);
}

TEST(RegionPageList, PageShiftStopsAt1GiB) {
    const std::vector<pci::Run> runs = {run(0x10'0000'0000, 0x10'0000'0000)};
    EXPECT_EQ(region_page_shift(0, runs), 30u);
}

TEST(RegionPageList, PageAddressesSplitRunsInOrder) {
    const std::vector<pci::Run> runs = {run(0x9000, 0x2000), run(0x2000, 0x1000)};
    EXPECT_EQ(page_addresses(runs, 12), (std::vector<std::uint64_t>{0x9000, 0xA000, 0x2000}));
}

TEST(RegionPageList, LevelZeroBaseIsTheOnlyPageAndNeedsNoTable) {
    const std::vector<std::uint64_t> pages = {0x1234'5000};
    EXPECT_EQ(write_page_list(pages, {}, PageListKind::Region, {}), 0x1234'5000u);
}

TEST(RegionPageList, LevelOneRegionPtesCarryValidOnly) {
    const std::vector<std::uint64_t> pages = {0xA000, 0x3000, 0x7000};
    const std::vector<std::uint64_t> tables = {0x55000};
    std::vector<std::byte> table(4096, std::byte{0xEE});
    EXPECT_EQ(write_page_list(pages, tables, PageListKind::Region, table), 0x55000u);
    // §2.1: PTE = page | VALID (bit 0).
    EXPECT_EQ(entry(table, 0), 0xA001u);
    EXPECT_EQ(entry(table, 1), 0x3001u);
    EXPECT_EQ(entry(table, 2), 0x7001u);
}

TEST(RegionPageList, LevelOneQueueMarksLastAndNextToLast) {
    const std::vector<std::uint64_t> pages = {0xA000, 0x3000, 0x7000, 0x9000};
    const std::vector<std::uint64_t> tables = {0x55000};
    std::vector<std::byte> table(4096);
    write_page_list(pages, tables, PageListKind::Queue, table);
    EXPECT_EQ(entry(table, 0), 0xA001u);
    EXPECT_EQ(entry(table, 1), 0x3001u);
    EXPECT_EQ(entry(table, 2), 0x7005u);  // VALID | NEXT_TO_LAST (bit 2)
    EXPECT_EQ(entry(table, 3), 0x9003u);  // VALID | LAST (bit 1)
}

TEST(RegionPageList, LevelTwoPdesNameThePtePagesInOrder) {
    const auto pages = scattered_pages(1030);  // 3 PTE pages: 512 + 512 + 6
    const std::vector<std::uint64_t> tables = {0x100000, 0x200000, 0x300000, 0x400000};
    std::vector<std::byte> table(4 * 4096);
    EXPECT_EQ(write_page_list(pages, tables, PageListKind::Region, table), 0x100000u);
    EXPECT_EQ(entry(table, 0), 0x200001u);  // PDE 0 → PTE page 0
    EXPECT_EQ(entry(table, 1), 0x300001u);
    EXPECT_EQ(entry(table, 2), 0x400001u);
    EXPECT_EQ(entry(table, 512 + 0), pages[0] | 1);      // PTE 0, first PTE page
    EXPECT_EQ(entry(table, 1024 + 0), pages[512] | 1);   // PTE 512, second PTE page
    EXPECT_EQ(entry(table, 1536 + 5), pages[1029] | 1);  // the last PTE
}

// §6.2: walking the list as the NIC does gives back every page, at each level.
TEST(RegionPageList, TranslationThroughEachLevelGivesEveryPage) {
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{512}, std::size_t{513}, std::size_t{2000}}) {
        const auto pages = scattered_pages(n);
        const auto level = *pbl_level(n);
        std::vector<std::uint64_t> tables;
        for (std::uint64_t j = 0; j < table_pages(level, n); ++j) tables.push_back(0x4000'0000 + j * 0x10'0000);
        std::vector<std::byte> table(tables.size() * 4096);
        const std::uint64_t base = write_page_list(pages, tables, PageListKind::Region, table);
        for (std::uint64_t i = 0; i < n; ++i)
            ASSERT_EQ(translate(level, base, tables, table, i), pages[i]) << n << " pages, page " << i;
    }
}

// Linux's bnxt_alloc_ctx_pg_tbls forces level 2 on the QP, SRQ, CQ, MRAV and slow-path TQM
// tables and level 1 on the rest, however few pages they have: one page at level 2 is a
// PDE page naming one PTE page naming it; at level 1 a PTE page naming it.
TEST(RegionPageList, AForcedLevelDescribesEvenOnePage) {
    const std::vector<std::uint64_t> pages = {0xA000};
    EXPECT_EQ(*pbl_level(1, hsi::PblLevel::LVL_2), hsi::PblLevel::LVL_2);
    EXPECT_EQ(table_pages(hsi::PblLevel::LVL_2, 1), 2u);
    std::vector<std::byte> table(2 * 4096);
    EXPECT_EQ(write_page_list(pages, std::vector<std::uint64_t>{0x50000, 0x60000}, PageListKind::Region, table,
                              hsi::PblLevel::LVL_2),
              0x50000u);
    EXPECT_EQ(entry(table, 0), 0x60001u);   // PDE 0 -> the PTE page
    EXPECT_EQ(entry(table, 512), 0xA001u);  // PTE 0 -> the page
    std::vector<std::byte> one(4096);
    EXPECT_EQ(
        write_page_list(pages, std::vector<std::uint64_t>{0x70000}, PageListKind::Region, one, hsi::PblLevel::LVL_1),
        0x70000u);
    EXPECT_EQ(entry(one, 0), 0xA001u);
    // Forced below what the pages need: the pages decide.
    EXPECT_EQ(*pbl_level(600, hsi::PblLevel::LVL_1), hsi::PblLevel::LVL_2);
}

TEST(RegionPageList, TooManyTablePagesForTheLevelThrows) {
    const std::vector<std::uint64_t> pages = {0x1000, 0x2000};
    const std::vector<std::uint64_t> tables = {0x5000, 0x6000};
    std::vector<std::byte> table(2 * 4096);
    EXPECT_THROW(write_page_list(pages, tables, PageListKind::Region, table), std::invalid_argument);
}

}  // namespace
}  // namespace rig::bnxt::detail

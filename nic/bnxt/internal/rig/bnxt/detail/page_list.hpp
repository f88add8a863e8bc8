// rig/bnxt/detail/page_list.hpp (internal: not installed, rig_bnxt_internal): how the driver describes memory to the NIC: the level of
// a page list and its PTE/PDE pages (docs/hsi.md §2, §6.2), and the page size of a
// memory region. Pure arithmetic on bus addresses;
// tests reach it through rig_bnxt_internal to pin it to bytes.
//
// The rules:
//  - Level by data pages: 1 page → level 0 (base = the page itself); 2..512 → level 1 (base
//    = one page of 512 PTEs); 513..512×512 → level 2 (base = a page of PDEs, PDE j naming
//    the PTE page of data pages 512j..512j+511). More pages need a larger page size.
//  - Table pages are 4 KiB, PTEs and PDEs 8 bytes little-endian with VALID set (§2.1).
//    Queue memory (SQ, RQ, CQ, NQ, CREQ) marks the PTE of its last page LAST and the one
//    before NEXT_TO_LAST; region page lists and PDEs carry VALID only.
//  - A region's page size is the largest power of two from 4 KiB to 1 GiB (§6.3) that the
//    region's address and every run's bus address and size are multiples of: the NIC
//    finds byte A at page (A >> P) - (va >> P) (§6.2), so va must share its alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "rig/bnxt/hsi/pbl.hpp"
#include "rig/pci/dma.hpp"

namespace rig::bnxt::detail {

enum class PageListKind : std::uint8_t {
    Queue,   // LAST and NEXT_TO_LAST on the last two PTEs
    Region,  // VALID only
};

// The level a list of `pages` data pages needs, or `at_least` where that is higher (Linux
// forces levels on context tables: bnxt_alloc_ctx_pg_tbls' depth); nullopt for 0 pages or
// more than level 2 holds (512 × 512).
constexpr std::optional<hsi::PblLevel> pbl_level(std::uint64_t pages, hsi::PblLevel at_least = hsi::PblLevel::LVL_0) {
    constexpr std::uint64_t per = hsi::pte::entries_per_page;
    if (pages == 0 || pages > per * per) return std::nullopt;
    hsi::PblLevel level = hsi::PblLevel::LVL_2;
    if (pages == 1) level = hsi::PblLevel::LVL_0;
    else if (pages <= per) level = hsi::PblLevel::LVL_1;
    return static_cast<std::uint8_t>(at_least) > static_cast<std::uint8_t>(level) ? at_least : level;
}

// 4 KiB table pages the list needs: none at level 0, one PTE page at level 1, one PDE
// page plus ceil(pages / 512) PTE pages at level 2.
constexpr std::uint64_t table_pages(hsi::PblLevel level, std::uint64_t pages) {
    constexpr std::uint64_t per = hsi::pte::entries_per_page;
    switch (level) {
    case hsi::PblLevel::LVL_0: return 0;
    case hsi::PblLevel::LVL_1: return 1;
    case hsi::PblLevel::LVL_2: return 1 + (pages + per - 1) / per;
    }
    return 0;
}

static_assert(pbl_level(1) == hsi::PblLevel::LVL_0 && pbl_level(2) == hsi::PblLevel::LVL_1);
static_assert(pbl_level(512) == hsi::PblLevel::LVL_1 && pbl_level(513) == hsi::PblLevel::LVL_2);
static_assert(pbl_level(512 * 512) == hsi::PblLevel::LVL_2 && !pbl_level(512 * 512 + 1) && !pbl_level(0));
static_assert(table_pages(hsi::PblLevel::LVL_2, 513) == 3);
static_assert(pbl_level(1, hsi::PblLevel::LVL_2) == hsi::PblLevel::LVL_2 &&
              pbl_level(600, hsi::PblLevel::LVL_1) == hsi::PblLevel::LVL_2);

// log2 of the region page size for `runs` named from `va` on (the rule above): 12 .. 30.
unsigned region_page_shift(std::uint64_t va, std::span<const pci::Run> runs);

// The bus address of every 2^shift-byte page of `runs`, in order. Every run's address and
// size must be multiples of 2^shift.
std::vector<std::uint64_t> page_addresses(std::span<const pci::Run> runs, unsigned shift);

// Writes the page list of `pages` (bus addresses of the data pages, in order) into
// `table`, whose 4 KiB pages lie at the bus addresses `table_addresses` (at level 2 the
// first is the PDE page); table.size() >= table_addresses.size() × 4096. The level is
// pbl_level(pages.size(), at_least) and table_addresses.size() must be table_pages of it.
// Returns the base the firmware is given: the data page at level 0, else the first table
// page.
std::uint64_t write_page_list(std::span<const std::uint64_t> pages, std::span<const std::uint64_t> table_addresses,
                              PageListKind kind, std::span<std::byte> table,
                              hsi::PblLevel at_least = hsi::PblLevel::LVL_0);

}  // namespace rig::bnxt::detail

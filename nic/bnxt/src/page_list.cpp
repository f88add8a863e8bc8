// Page lists and region page sizes (rig/bnxt/detail/page_list.hpp; docs/hsi.md §2.1,
// §2.2, §6.2, §6.3). Pure arithmetic: the caller allocates the table pages.
#include "rig/bnxt/detail/page_list.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "rig/little_endian.hpp"

namespace rig::bnxt::detail {
namespace {

constexpr unsigned min_shift = 12;  // 4 KiB, §6.3
constexpr unsigned max_shift = 30;  // 1 GiB

// The number of trailing zero bits of x, capped at max_shift (x == 0 is aligned to all).
unsigned alignment_shift(std::uint64_t x) {
    return x == 0 ? max_shift : std::min<unsigned>(max_shift, static_cast<unsigned>(std::countr_zero(x)));
}

void put_entry(std::span<std::byte> table, std::uint64_t entry_index, std::uint64_t value) {
    const little_endian::Le64 le(value);
    std::memcpy(table.data() + entry_index * hsi::pte::entry_bytes, &le, sizeof le);
}

}  // namespace

unsigned region_page_shift(std::uint64_t va, std::span<const pci::Run> runs) {
    unsigned shift = alignment_shift(va);
    for (const pci::Run& run : runs)
        shift = std::min({shift, alignment_shift(run.address.value), alignment_shift(run.bytes)});
    return std::max(shift, min_shift);
}

std::vector<std::uint64_t> page_addresses(std::span<const pci::Run> runs, unsigned shift) {
    const std::uint64_t page = std::uint64_t{1} << shift;
    std::vector<std::uint64_t> pages;
    std::uint64_t total = 0;
    for (const pci::Run& run : runs) total += run.bytes / page;
    pages.reserve(total);
    for (const pci::Run& run : runs) {
        if (run.address.value % page != 0 || run.bytes % page != 0)
            throw std::invalid_argument("page_addresses: a run is not a multiple of the page");
        for (std::uint64_t offset = 0; offset < run.bytes; offset += page) pages.push_back(run.address.value + offset);
    }
    return pages;
}

std::uint64_t write_page_list(std::span<const std::uint64_t> pages, std::span<const std::uint64_t> table_addresses,
                              PageListKind kind, std::span<std::byte> table, hsi::PblLevel at_least) {
    const auto level = pbl_level(pages.size(), at_least);
    if (!level)
        throw std::invalid_argument("write_page_list: no level holds " + std::to_string(pages.size()) + " pages");
    if (table_addresses.size() != table_pages(*level, pages.size()) ||
        table.size() < table_addresses.size() * hsi::pte::table_page_bytes)
        throw std::invalid_argument("write_page_list: the table pages do not fit the level");
    if (*level == hsi::PblLevel::LVL_0) return pages[0];

    // The PTEs: at level 1 in the one table page, at level 2 from the second page on, so
    // that PTE i lies at byte 8i of the PTE pages taken together.
    const std::uint64_t first_pte_page = *level == hsi::PblLevel::LVL_1 ? 0 : 1;
    const std::uint64_t n = pages.size();
    for (std::uint64_t i = 0; i < n; ++i) {
        const bool queue = kind == PageListKind::Queue;
        const bool last = queue && i == n - 1;
        const bool next_to_last = queue && n >= 2 && i == n - 2;
        put_entry(table, first_pte_page * hsi::pte::entries_per_page + i,
                  hsi::encode_pte(pages[i], last, next_to_last));
    }
    if (*level == hsi::PblLevel::LVL_2) {
        // PDE j names PTE page j (§6.2: PDE = read64(B + 8 (i >> 9))).
        for (std::uint64_t j = 1; j < table_addresses.size(); ++j)
            put_entry(table, j - 1, hsi::encode_pte(table_addresses[j]));
    }
    return table_addresses[0];
}

}  // namespace rig::bnxt::detail

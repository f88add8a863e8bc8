// rig/bnxt/hsi/pbl.hpp: page lists, the memory descriptors shared by every ring and
// memory region (docs/hsi.md §2). A queue, table or MR is (level, page size, base):
// level 0 names the one data page (or contiguous buffer), level 1 a page of PTEs, level 2
// a page of PDEs each naming a page of PTEs. Element n of stride s lies at byte n*s of the
// concatenated data pages. PTE and PDE pages are always 4 KiB (512 entries).
#pragma once

#include <cstddef>
#include <cstdint>

#include "rig/little_endian.hpp"

namespace rig::bnxt::hsi {

using rig::little_endian::Field;

// §0: rings count 16-byte slots; CQEs are 32 bytes.
inline constexpr std::size_t slot_bytes = 16;

// §2.2: the levels of a page list.
enum class PblLevel : std::uint8_t {
    LVL_0 = 0,  // base is the only data page (or the contiguous buffer)
    LVL_1 = 1,  // base is a page of PTEs: 2..512 data pages
    LVL_2 = 2,  // base is a page of PDEs: more than 512 data pages
};

// §2.1: a PTE or PDE, 8 bytes little-endian.
namespace pte {
inline constexpr Field<0, 1> VALID;         // set on every PTE/PDE of RoCE queues, MRs, contexts
inline constexpr Field<1, 1> LAST;          // rings only: PTE of the last page
inline constexpr Field<2, 1> NEXT_TO_LAST;  // rings only: PTE of the second-to-last page
inline constexpr std::uint64_t address_mask = ~std::uint64_t{0xFFF};  // bits 63:12: the page
inline constexpr std::size_t entry_bytes = 8;
inline constexpr std::size_t table_page_bytes = 4096;                            // PTE/PDE pages (§2.2, §6.2)
inline constexpr std::size_t entries_per_page = table_page_bytes / entry_bytes;  // 512
inline constexpr unsigned entries_per_page_log2 = 9;
}  // namespace pte

// A PTE or PDE naming `page` (4 KiB aligned) with the flags given.
constexpr std::uint64_t encode_pte(std::uint64_t page, bool last = false, bool next_to_last = false) {
    return (page & pte::address_mask) | pte::VALID(1) | pte::LAST(last ? 1 : 0) |
           pte::NEXT_TO_LAST(next_to_last ? 1 : 0);
}
static_assert(encode_pte(0x12345000, true, false) == 0x12345003);
static_assert(encode_pte(0xABCD000, false, true) == 0xABCD005);

// §2.3: the "PG" page-size codes of queues, backing store and INITIALIZE_FW.
// (REGISTER_MR and HWRM RING_ALLOC use log2 of the page size instead.)
enum class PgSize : std::uint8_t {
    PG_4K = 0,
    PG_8K = 1,
    PG_64K = 2,
    PG_2M = 3,
    PG_8M = 4,
    PG_1G = 5,
};

// log2 of the bytes of a PG code; 0 for a code §2.3 does not list.
constexpr unsigned pg_size_log2(std::uint8_t code) {
    switch (code) {
    case 0: return 12;
    case 1: return 13;
    case 2: return 16;
    case 3: return 21;
    case 4: return 23;
    case 5: return 30;
    default: return 0;
    }
}
static_assert(pg_size_log2(static_cast<std::uint8_t>(PgSize::PG_2M)) == 21);

}  // namespace rig::bnxt::hsi

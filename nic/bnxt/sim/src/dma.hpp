// dma.hpp: how the bnxt model reaches memory: every access through its Port (device.hpp),
// each fault counted, ring entries published body first and valid byte last, and page
// lists (§2) walked to find the bus address of a byte of a ring or a memory region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "rig/bnxt/sim/testing/faults.hpp"
#include "rig/sim/device.hpp"

namespace rig::bnxt::sim::detail {

class Bus {
public:
    explicit Bus(testing::Counters& counters) : counters_(counters) {}
    void attach(rig::sim::Port* port) { port_ = port; }
    rig::sim::Port* port() const { return port_; }

    // false where the bus faulted (or no port is attached): nothing moved, it is counted.
    bool read(std::uint64_t address, std::span<std::byte> out);
    bool write(std::uint64_t address, std::span<const std::byte> in);
    std::optional<std::uint64_t> read64(std::uint64_t address);

    // A ring entry: every byte but the one at `valid_offset`, then that byte alone
    // (a 1-byte release write, device.hpp), so a reader that sees it sees the entry.
    bool publish(std::uint64_t address, std::span<const std::byte> entry, std::size_t valid_offset);

    void interrupt(unsigned vector);
    // A PTE or PDE without VALID (§2.1): counted, used anyway.
    void invalid_entry() { ++counters_.pte_invalid; }

    // The status of the last access that faulted.
    rig::sim::DmaStatus last_fault() const { return last_fault_; }

private:
    rig::sim::Port* port_ = nullptr;
    testing::Counters& counters_;
    rig::sim::DmaStatus last_fault_ = rig::sim::DmaStatus::Ok;
};

// A byte's bus address and how many bytes follow it contiguously (to the end of its page).
struct Located {
    std::uint64_t address = 0;
    std::uint64_t contiguous = 0;
};

// A page list (§2.2): level 0 names a contiguous buffer (a ring's, or an MR's one data
// page), level 1 a page of PTEs, level 2 a table of PDEs. Translations are cached: the
// driver may not change a list the device holds.
class PageList {
public:
    PageList() = default;
    PageList(unsigned level, unsigned page_log2, std::uint64_t base)
        : level_(level), page_log2_(page_log2), base_(base) {}

    unsigned level() const { return level_; }
    unsigned page_log2() const { return page_log2_; }
    std::uint64_t base() const { return base_; }

    // Byte `offset` of the concatenated data pages (§2.2); nullopt where reading a PTE or
    // PDE faulted. A PTE/PDE without VALID is counted and used (§2.1).
    std::optional<Located> locate(Bus& bus, std::uint64_t offset);

private:
    std::optional<std::uint64_t> page(Bus& bus, std::uint64_t index);

    unsigned level_ = 0;
    unsigned page_log2_ = 12;
    std::uint64_t base_ = 0;
    std::unordered_map<std::uint64_t, std::uint64_t> pages_;
};

// Reads or writes `bytes.size()` bytes from byte `offset` of a page list, page by page.
bool read_list(Bus& bus, PageList& list, std::uint64_t offset, std::span<std::byte> out);
bool write_list(Bus& bus, PageList& list, std::uint64_t offset, std::span<const std::byte> in);
bool publish_list(Bus& bus, PageList& list, std::uint64_t offset, std::span<const std::byte> entry,
                  std::size_t valid_offset);

}  // namespace rig::bnxt::sim::detail

// The model's memory accesses (dma.hpp): Port calls, fault counting, publishing ring
// entries, and the page-list walk of docs/hsi.md §2.2 and §6.2 step 3.
#include "dma.hpp"

#include <algorithm>
#include <array>

#include "rig/bnxt/hsi/pbl.hpp"

namespace rig::bnxt::sim::detail {

using rig::sim::DmaStatus;

bool Bus::read(std::uint64_t address, std::span<std::byte> out) {
    if (out.empty()) return true;
    const DmaStatus s = port_ ? port_->read(pci::DmaAddress{address}, out) : DmaStatus::UnsupportedRequest;
    if (s == DmaStatus::Ok) return true;
    last_fault_ = s;
    ++counters_.dma_faults;
    return false;
}

bool Bus::write(std::uint64_t address, std::span<const std::byte> in) {
    if (in.empty()) return true;
    const DmaStatus s = port_ ? port_->write(pci::DmaAddress{address}, in) : DmaStatus::UnsupportedRequest;
    if (s == DmaStatus::Ok) return true;
    last_fault_ = s;
    ++counters_.dma_faults;
    return false;
}

std::optional<std::uint64_t> Bus::read64(std::uint64_t address) {
    std::array<std::byte, 8> b{};
    if (!read(address, b)) return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) v |= std::uint64_t{std::to_integer<std::uint8_t>(b[i])} << (8 * i);
    return v;
}

bool Bus::publish(std::uint64_t address, std::span<const std::byte> entry, std::size_t valid_offset) {
    if (!write(address, entry.first(valid_offset))) return false;
    if (!write(address + valid_offset + 1, entry.subspan(valid_offset + 1))) return false;
    return write(address + valid_offset, entry.subspan(valid_offset, 1));
}

void Bus::interrupt(unsigned vector) {
    if (!port_) return;
    ++counters_.interrupts;
    port_->interrupt(vector);
}

std::optional<std::uint64_t> PageList::page(Bus& bus, std::uint64_t index) {
    if (auto it = pages_.find(index); it != pages_.end()) return it->second;
    std::optional<std::uint64_t> entry;
    if (level_ == 1) {
        entry = bus.read64(base_ + hsi::pte::entry_bytes * index);
    } else {
        const auto pde = bus.read64(base_ + hsi::pte::entry_bytes * (index >> hsi::pte::entries_per_page_log2));
        if (!pde) return std::nullopt;
        if (!hsi::pte::VALID.of(*pde)) bus.invalid_entry();
        entry = bus.read64((*pde & hsi::pte::address_mask) +
                           hsi::pte::entry_bytes * (index & (hsi::pte::entries_per_page - 1)));
    }
    if (!entry) return std::nullopt;
    if (!hsi::pte::VALID.of(*entry)) bus.invalid_entry();
    const std::uint64_t address = *entry & hsi::pte::address_mask;
    pages_.emplace(index, address);
    return address;
}

std::optional<Located> PageList::locate(Bus& bus, std::uint64_t offset) {
    if (level_ == 0) return Located{base_ + offset, ~std::uint64_t{0} - offset};
    const std::uint64_t page_bytes = std::uint64_t{1} << page_log2_;
    const auto p = page(bus, offset >> page_log2_);
    if (!p) return std::nullopt;
    const std::uint64_t within = offset & (page_bytes - 1);
    return Located{*p + within, page_bytes - within};
}

namespace {

template <class Span, class Access>
bool walk(Bus& bus, PageList& list, std::uint64_t offset, Span bytes, Access access) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const auto at = list.locate(bus, offset + done);
        if (!at) return false;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(at->contiguous, bytes.size() - done));
        if (!access(at->address, bytes.subspan(done, n))) return false;
        done += n;
    }
    return true;
}

}  // namespace

bool read_list(Bus& bus, PageList& list, std::uint64_t offset, std::span<std::byte> out) {
    return walk(bus, list, offset, out, [&](std::uint64_t a, std::span<std::byte> s) { return bus.read(a, s); });
}

bool write_list(Bus& bus, PageList& list, std::uint64_t offset, std::span<const std::byte> in) {
    return walk(bus, list, offset, in, [&](std::uint64_t a, std::span<const std::byte> s) { return bus.write(a, s); });
}

bool publish_list(Bus& bus, PageList& list, std::uint64_t offset, std::span<const std::byte> entry,
                  std::size_t valid_offset) {
    // Entries (16 or 32 bytes) never straddle a page: pages are multiples of entries.
    const auto at = list.locate(bus, offset);
    if (!at) return false;
    return bus.publish(at->address, entry, valid_offset);
}

}  // namespace rig::bnxt::sim::detail

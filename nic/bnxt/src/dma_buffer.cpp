// DMA memory the driver owns and queue memory with its page list (dma_buffer.hpp).
#include "dma_buffer.hpp"

#include <stdexcept>
#include <utility>

namespace rig::bnxt {

Result<DmaBuffer> DmaBuffer::allocate(const pci::Function& fn, std::uint64_t bytes, pci::Contiguity contiguity,
                                      std::string_view what) {
    auto dma = fn.alloc_dma(bytes, contiguity);
    // alloc_dma's message names the function and the size; the buffer's use goes in front.
    if (!dma) return fail(what, ": ", dma.error());
    if (!dma->window.is_mapped()) {
        fn.free_dma(*dma);
        return fail(what, ": ", fn.bus(),
                    ": the machine's DMA memory is not mapped into this process (reached through ",
                    "a transport); the driver writes its queues and reads its completions in place");
    }
    DmaBuffer b;
    b.fn_ = fn;
    b.dma_ = std::move(*dma);
    return b;
}

DmaBuffer::DmaBuffer(DmaBuffer&& other) noexcept
    : fn_(std::exchange(other.fn_, std::nullopt)), dma_(std::exchange(other.dma_, pci::Dma{})) {}

DmaBuffer& DmaBuffer::operator=(DmaBuffer&& other) noexcept {
    if (this != &other) {
        reset();
        fn_ = std::exchange(other.fn_, std::nullopt);
        dma_ = std::exchange(other.dma_, pci::Dma{});
    }
    return *this;
}

void DmaBuffer::reset() {
    if (!fn_) return;
    if (!fn_->released()) {
        try {
            fn_->free_dma(dma_);
        } catch (const std::invalid_argument&) {
            // Released between the test and the call: release gave the memory back.
        }
    }
    fn_.reset();
    dma_ = pci::Dma{};
}

std::uint64_t DmaBuffer::bus(std::uint64_t offset) const {
    for (const pci::Run& run : dma_.runs) {
        if (offset < run.bytes) return run.address.value + offset;
        offset -= run.bytes;
    }
    throw std::invalid_argument("DmaBuffer::bus: offset beyond the buffer");
}

void DmaBuffer::fill(std::byte value) const {
    std::array<std::byte, 4096> chunk;
    chunk.fill(value);
    const std::uint64_t n = dma_.window.size();
    for (std::uint64_t offset = 0; offset < n; offset += chunk.size())
        dma_.window.write(offset,
                          std::span<const std::byte>(chunk.data(), std::min<std::uint64_t>(chunk.size(), n - offset)));
}

Result<PageList> make_page_list(const pci::Function& fn, std::span<const std::uint64_t> pages,
                                detail::PageListKind kind, std::string_view what, hsi::PblLevel at_least) {
    const auto level = detail::pbl_level(pages.size(), at_least);
    if (!level)
        return fail(fn.bus(), ": the ", what, " needs ", std::to_string(pages.size()),
                    " pages, more than a level-2 page list holds (262144)");
    PageList list;
    list.level = *level;
    const std::uint64_t n = detail::table_pages(*level, pages.size());
    std::vector<std::uint64_t> table_addresses;
    std::vector<std::byte> bytes;
    if (n != 0) {
        auto table = DmaBuffer::allocate(fn, n * hsi::pte::table_page_bytes, pci::Contiguity::Any, "page list");
        if (!table) return std::unexpected(std::move(table).error());
        list.table = std::move(*table);
        for (std::uint64_t j = 0; j < n; ++j) table_addresses.push_back(list.table.bus(j * hsi::pte::table_page_bytes));
        bytes.resize(n * hsi::pte::table_page_bytes);
    }
    list.base = detail::write_page_list(pages, table_addresses, kind, bytes, at_least);
    if (n != 0) list.table.window().write(0, bytes);
    return list;
}

Result<QueueMemory> allocate_queue(const pci::Function& fn, std::uint64_t bytes, std::byte poison,
                                   std::string_view what) {
    const std::uint64_t page = hsi::pte::table_page_bytes;
    auto memory = DmaBuffer::allocate(fn, (bytes + page - 1) / page * page, pci::Contiguity::Any, what);
    if (!memory) return std::unexpected(std::move(memory).error());
    memory->fill(poison);
    const std::uint64_t shift = 12;
    auto pages = detail::page_addresses(memory->runs(), shift);
    // The machine's page may exceed 4 KiB: describe only the bytes asked for.
    pages.resize((bytes + page - 1) / page);
    auto list = make_page_list(fn, pages, detail::PageListKind::Queue, what);
    if (!list) return std::unexpected(std::move(list).error());
    return QueueMemory{std::move(*memory), std::move(*list)};
}

}  // namespace rig::bnxt

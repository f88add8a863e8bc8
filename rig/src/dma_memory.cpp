// Process memory for DMA, and its physical addresses (dma_memory.hpp).
#include "dma_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <array>
#include <utility>

#include "rig/text.hpp"
#include "rig/little_endian.hpp"

namespace rig::pci {
namespace {

// Documentation/admin-guide/mm/pagemap.rst: one 64-bit entry per page; bits 0-54 the
// page frame number, bit 63 "present".
constexpr std::uint64_t pagemap_frame_mask = (std::uint64_t{1} << 55) - 1;
constexpr std::uint64_t pagemap_present = std::uint64_t{1} << 63;

}  // namespace

Result<DmaMemory> DmaMemory::map(vfio::Kernel& kernel, std::uint64_t bytes, std::optional<std::uintptr_t> va,
                                 Residency residency, const std::string& what) {
    int flags = MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE;
    if (residency == Residency::Locked) flags |= MAP_LOCKED;
    if (va) flags |= MAP_FIXED;
    auto* at = va ? reinterpret_cast<std::byte*>(*va) : nullptr;
    auto p = kernel.mmap(at, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (!p)
        return fail(what, ": cannot map ", text::bytes(bytes), " of memory", va ? " at " + text::hex(*va) : "", ": ",
                    vfio::errno_text(p.error()));
    DmaMemory m;
    m.kernel_ = &kernel;
    m.base_ = *p;
    m.bytes_ = bytes;
    m.reserved_ = va.has_value();
    return m;
}

DmaMemory::DmaMemory(DmaMemory&& other) noexcept
    : kernel_(other.kernel_),
      base_(std::exchange(other.base_, nullptr)),
      bytes_(other.bytes_),
      reserved_(other.reserved_) {}

DmaMemory& DmaMemory::operator=(DmaMemory&& other) noexcept {
    if (this != &other) {
        reset();
        kernel_ = other.kernel_;
        base_ = std::exchange(other.base_, nullptr);
        bytes_ = other.bytes_;
        reserved_ = other.reserved_;
    }
    return *this;
}

DmaMemory::~DmaMemory() { reset(); }

void DmaMemory::reset() {
    std::byte* base = std::exchange(base_, nullptr);
    if (!base) return;
    if (reserved_) {
        // Back to an inaccessible reservation, in one step: the range is never unmapped.
        auto r = kernel_->mmap(base, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        if (r) return;
    }
    kernel_->munmap(base, bytes_);
}

Result<std::vector<Run>> physical_runs(vfio::Kernel& kernel, std::uintptr_t address, std::uint64_t bytes,
                                       std::uint64_t page) {
    const std::string file = "/proc/self/pagemap";
    auto fd = kernel.open(file, O_RDONLY);
    if (!fd) return fail("cannot open ", file, ": ", vfio::errno_text(fd.error()));
    vfio::Fd owned(kernel, *fd);
    std::vector<Run> runs;
    for (std::uint64_t done = 0; done < bytes; done += page) {
        const std::uintptr_t va = address + done;
        std::array<std::byte, 8> entry{};
        auto n = kernel.pread(owned.get(), entry, va / page * sizeof entry);
        if (!n || *n != entry.size())
            return fail("cannot read ", file, " at the page of ", text::hex(va),
                        n ? "" : ": " + vfio::errno_text(n.error()));
        const auto word = little_endian::load<std::uint64_t>(entry);
        const std::uint64_t frame = word & pagemap_frame_mask;
        if (!(word & pagemap_present)) return fail(file, ": the page at ", text::hex(va), " is not present");
        if (frame == 0)
            return fail(file,
                        " hides physical addresses from this process: reaching physical memory without an "
                        "IOMMU needs CAP_SYS_ADMIN");
        const DmaAddress physical{frame * page};
        if (!runs.empty() && runs.back().address + runs.back().bytes == physical) runs.back().bytes += page;
        else runs.push_back({physical, page});
    }
    return runs;
}

}  // namespace rig::pci

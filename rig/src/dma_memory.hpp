// Process memory for Function::alloc_dma, shared by the local VFIO path and the simulator
// (internal to rig_pci).
//
// alloc_dma's memory is anonymous, shared (so a fork() never turns the device's pages
// copy-on-write), zeroed by the kernel, and populated at once. Placed at a va, it is
// mapped over the inaccessible reservation (reservation.hpp) with MAP_FIXED, and given
// back by mapping the reservation over it again, so the range stays reserved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rig/pci/dma.hpp"
#include "rig/result.hpp"
#include "vfio_kernel.hpp"

namespace rig::pci {

// Whether the kernel may move the pages: a device that reaches them at their physical
// addresses needs them locked in RAM (MAP_LOCKED); behind an IOMMU the mapping pins them.
enum class Residency { Movable, Locked };

class DmaMemory {
public:
    // `bytes` (a multiple of the page) of zeroed memory, at `va` where given. Error naming
    // `what`, the size and the errno.
    static Result<DmaMemory> map(vfio::Kernel& kernel, std::uint64_t bytes, std::optional<std::uintptr_t> va,
                                 Residency residency, const std::string& what);
    DmaMemory() = default;
    DmaMemory(DmaMemory&& other) noexcept;
    DmaMemory& operator=(DmaMemory&& other) noexcept;
    ~DmaMemory();

    std::byte* data() const { return base_; }
    std::uint64_t size() const { return bytes_; }
    // Gives the memory back now (to the reservation where it was placed at a va).
    void reset();
    // Forgets the memory without giving it back: for pages a device may still write.
    void leak() { base_ = nullptr; }

private:
    vfio::Kernel* kernel_ = nullptr;
    std::byte* base_ = nullptr;
    std::uint64_t bytes_ = 0;
    bool reserved_ = false;  // placed over a reservation: give back by re-reserving
};

// The physical addresses of [address, address + bytes) (page-aligned), from
// /proc/self/pagemap, as runs: each run's pages are consecutive in physical memory.
// Error where the file cannot be read, or it shows a page absent or a frame number of 0
// (the kernel hides frame numbers from a process without CAP_SYS_ADMIN).
Result<std::vector<Run>> physical_runs(vfio::Kernel& kernel, std::uintptr_t address, std::uint64_t bytes,
                                       std::uint64_t page);

}  // namespace rig::pci

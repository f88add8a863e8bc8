// rig/gpu/backend.hpp: what a GPU backend implements for rig::gpu::Gpu (gpu.hpp), as
// rig/pci/transport.hpp is what a transport implements for Machine.
//
// Gpu checks every argument before it calls a backend, so a backend is called only with:
//  - alloc: an address of the Space aligned to granularity(), bytes a multiple of it;
//  - runs, dmabuf: offset and bytes multiples of 4096, bytes > 0, inside the allocation's
//    held size (its bytes rounded up to granularity());
//  - copies, fill, checksum: an allocation this backend made (alloc or map), a byte range
//    inside its requested size, n > 0; host ranges inside the HostBuffer's window.
// Errors start with the GPU (label()) and name the size, as gpu.hpp states.
// Thread safety: every member may be called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rig/gpu/gpu.hpp"
#include "rig/pci/dma.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::gpu {

// GPU memory a backend allocated at a Space address, or mapped from a peer. The destructor
// gives it back (a peer's mapping keeps its owner's memory until it goes). Allocations are
// destroyed before their Space range goes back, so the address is free in the driver when
// the Space hands it out again.
class Allocation {
public:
    virtual ~Allocation() = default;
    // The bus address runs of bytes [offset, offset + bytes) on the owner's bus, in order,
    // adjacent runs merged.
    virtual Result<std::vector<pci::Run>> runs(std::uint64_t offset, std::uint64_t bytes) const = 0;
    // A dma-buf over at least bytes [offset, offset + bytes), its offset() the place of
    // byte `offset` in it (0 where the platform exports exactly the range, the byte's
    // place in the allocation where it exports only whole allocations).
    virtual Result<Dmabuf> dmabuf(std::uint64_t offset, std::uint64_t bytes) const = 0;
    // The bus address runs, on the owner's machine (Backend::machine), of every byte of it
    // a device can reach, in order: what a NIC's region may cover and claim (B18). Empty
    // where the backend publishes no runs (CUDA) or none can be read (HIP without
    // CAP_SYS_ADMIN); bytes past a BAR are left out.
    virtual std::vector<pci::Run> reachable() const = 0;
    // Where the process addresses the whole allocation as one range (Memory::pointer).
    // The default: an Error saying the backend gives none.
    virtual Result<Pointer> pointer() const;
};

// Host memory a backend's driver allocated and pinned for its GPU (Gpu::host). The
// destructor gives it back.
class HostAllocation {
public:
    explicit HostAllocation(HostBuffer b) : buffer(std::move(b)) {}
    virtual ~HostAllocation() = default;
    HostAllocation(const HostAllocation&) = delete;
    HostAllocation& operator=(const HostAllocation&) = delete;
    const HostBuffer buffer;
};

class Backend {
public:
    virtual ~Backend() = default;

    // "0000:41:00.0 (NVIDIA H200)": how messages name the GPU.
    const std::string& label() const { return label_; }
    const std::string& name() const { return name_; }
    const std::string& bus() const { return bus_; }

    // The machine whose bus the GPU's runs are on, whose claims (Machine::claims) a free
    // asks (B18): this computer's for CUDA and HIP, the simulated machine's for sim.
    virtual pci::Machine machine() const { return pci::Machine::local(); }

    // The allocation granularity in bytes: a power of two, at least 4096.
    virtual std::uint64_t granularity() const = 0;

    // `bytes` bytes of memory at Space address `address`.
    virtual Result<std::shared_ptr<Allocation>> alloc(std::int64_t address, std::uint64_t bytes) = 0;
    // `peer`, memory another GPU allocated (an Allocation its alloc made, never a peer's
    // mapping of it), mapped for this GPU at `address`, where it lies. Throws
    // std::invalid_argument where `peer` is another backend kind's.
    virtual Result<std::shared_ptr<Allocation>> map(const std::shared_ptr<Allocation>& peer, std::int64_t address,
                                                    std::uint64_t bytes) = 0;

    // At least `bytes` (> 0) bytes of host memory the GPU's copy engine reaches, its
    // window starting on a page.
    virtual Result<std::shared_ptr<HostAllocation>> host(std::uint64_t bytes) = 0;

    virtual Result<void> upload(Allocation& memory, std::uint64_t offset, std::span<const std::byte> bytes) = 0;
    virtual Result<void> download(Allocation& memory, std::uint64_t offset, std::span<std::byte> out) = 0;
    virtual Result<void> copy_to_host(Allocation& memory, std::uint64_t offset, const HostBuffer& host,
                                      std::uint64_t host_offset, std::uint64_t n) = 0;
    virtual Result<void> copy_from_host(const HostBuffer& host, std::uint64_t host_offset, Allocation& memory,
                                        std::uint64_t offset, std::uint64_t n) = 0;
    virtual Result<void> fill(Allocation& memory, std::uint64_t offset, std::uint64_t n, std::uint64_t seed) = 0;
    virtual Result<std::uint64_t> checksum(Allocation& memory, std::uint64_t offset, std::uint64_t n) = 0;

protected:
    Backend(std::string name, std::string bus)
        : name_(std::move(name)), bus_(std::move(bus)), label_(bus_ + " (" + name_ + ")") {}

    // For backends that copy through the process (CUDA, HIP): byte `offset` of `host`'s
    // window, or an Error naming the GPU and the n bytes where the window is not mapped.
    Result<std::byte*> process_bytes(const HostBuffer& host, std::uint64_t offset, std::uint64_t n) const;

private:
    std::string name_, bus_, label_;
};

}  // namespace rig::gpu

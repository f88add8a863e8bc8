// rig/gpu/gpu.hpp: what the data path needs from a GPU, whichever backend drives it
// (docs/design.md, "GPU backends"; the backends: rig/gpu/sim.hpp, cuda.hpp, hip.hpp).
//
// A Gpu allocates Memory at addresses of its vendor's shared rig::Space
// (docs/api.md, "Space"): an address means the same memory on every GPU that
// maps it, so one GPU's memory is mapped by a peer at the address it has on its owner.
// Memory publishes its bus address runs: where exactly a part of it is reachable through
// its GPU's memory BAR, for a NIC to DMA into (Region::device, docs/api.md, "Region"). The copy engine
// moves bytes between GPU memory and host memory it reaches by DMA (the bounce path),
// and fill/checksum run on the GPU, so that a transfer is verified without downloading it
// (rig/gpu/pattern.hpp defines both; rig/gpu/reference.hpp computes them on the host).
//
// Lifecycle: open (a backend's `open`) → alloc / map / host → runs, copies, fill, checksum
// → free → close.
// Memory a device still reaches is not given back (cases B18, docs/bugs.md): a NIC's
// region over its runs or over host memory's pages claims them (rig/pci/claim.hpp), and
// free and close refuse while a claim covers any byte, naming the region's NIC and the
// range. Memory whose last handle goes while claimed stays until the claim goes, as the
// kernel keeps a page a device holds, so its address is not handed out again meanwhile.
// Gpu and Memory are handles: copies share one GPU, one allocation. Memory keeps its GPU's
// driver state alive; the GPU memory behind it goes back once every GPU that holds it (its
// owner and the peers that map it) freed it or dropped its last handle, as the Space's
// range does.
//
// Errors (rig::Result) start with the GPU, "0000:41:00.0 (NVIDIA H200): ", and name the
// size: out of memory, memory a NIC cannot reach (past the BAR: with the BAR's size), a Space
// address the driver would not map (with the address), a copy the GPU failed (with the
// driver's status in words). Caller bugs throw std::invalid_argument naming the value:
// a size of 0, a byte range outside its memory, host memory too small, memory freed or of
// another GPU.
//
// Thread safety: every member of Gpu and Memory may be called from several threads at
// once (two copies into the same bytes at once leave either's bytes, as on hardware); a
// free while a copy of the same memory runs takes effect when the copy ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rig/pci/dma.hpp"
#include "rig/pci/window.hpp"
#include "rig/result.hpp"

namespace rig {
class Space;
}

namespace rig::gpu {

class Backend;
class Allocation;
class HostAllocation;

// Bus address runs of a byte range of GPU memory, page-rounded: `runs`, in order, cover
// the range's first byte rounded down to 4096 through its last byte rounded up to 4096,
// each run's address and bytes a multiple of 4096; the range's first byte lies at byte
// `offset` (< 4096) of the first run. What a NIC registers (Region::device) to reach
// exactly that range at `offset` in its region (docs/bugs.md B13, B15).
struct Runs {
    std::vector<pci::Run> runs;
    std::uint64_t offset = 0;
    friend bool operator==(const Runs&, const Runs&) = default;
};

// A dma-buf exported for a byte range of GPU memory: an owned file descriptor (closed by
// the destructor) of `bytes` bytes that hold the range, and the byte `offset` of the
// range's first byte in it. Where the platform exports exactly a range (CUDA) the
// dma-buf is the range's pages, rounded as Runs rounds them; where it exports only
// whole allocations (amdgpu) it is the allocation, and `offset` is where the range
// starts in it: a NIC registering it at offset 0 would reach the wrong bytes (case B13).
// Move-only.
class Dmabuf {
public:
    Dmabuf(int fd, std::uint64_t bytes, std::uint64_t offset) : fd_(fd), bytes_(bytes), offset_(offset) {}
    Dmabuf(Dmabuf&& other) noexcept;
    Dmabuf& operator=(Dmabuf&& other) noexcept;
    Dmabuf(const Dmabuf&) = delete;
    Dmabuf& operator=(const Dmabuf&) = delete;
    ~Dmabuf();

    int fd() const { return fd_; }
    std::uint64_t bytes() const { return bytes_; }  // of the dma-buf, a multiple of 4096
    std::uint64_t offset() const { return offset_; }
    // Gives up the descriptor, which the caller then owns; fd() is -1 afterwards.
    int release() { return std::exchange(fd_, -1); }

private:
    int fd_ = -1;
    std::uint64_t bytes_ = 0;
    std::uint64_t offset_ = 0;
};

// Host memory a GPU's copy engine reaches:
//  - on a rig::pci machine (the simulated GPU), at bus addresses: `runs`, in order,
//    cover the window's bytes, as pci::Dma's runs do. A NIC's host region (a pci::Dma of
//    the NIC) serves where the GPU reaches the same runs: physical addresses on a machine
//    without an IOMMU, or runs the caller pinned for the GPU's function; the GPU's own
//    host memory (HostMemory) serves always;
//  - through the process (CUDA, HIP): `window` is mapped and `runs` may be empty.
// `window` is the process's view either way; copies never go through it on a GPU that
// reaches the runs.
struct HostBuffer {
    pci::Window window;
    std::vector<pci::Run> runs;

    static HostBuffer of(const pci::Dma& dma) { return {dma.window, dma.runs}; }
    static HostBuffer of(std::span<std::byte> process) {
        return {pci::Window::mapped(process.data(), process.size()), {}};
    }
    std::uint64_t size() const { return window.size(); }
};

// Host memory a GPU's driver allocated and pinned for its copy engine (Gpu::host), as
// cudaHostAlloc and hipHostMalloc give it: at least the bytes asked for, starting on a
// page, mapped into the process (remote only on a machine a remote transport reaches).
// buffer() is what copies take: the simulated GPU reaches it at runs of its own function's
// DMA memory (physical addresses, or IOVAs of its IOMMU domain), CUDA and HIP through the
// process. A NIC behind an IOMMU pins the same pages into its own domain (Region::pages
// over buffer().window), so each device reaches them at its own addresses: the bounce
// path's host memory where the NIC's own DMA memory lies at IOVAs the GPU cannot use.
// A NIC at physical addresses cannot pin it (Function::pin takes only memory its own
// alloc_dma gave).
// A handle: copies share one allocation, which the last copy's destructor gives back to
// the GPU's driver (the GPU stays open until then); while a region over its pages covers
// them it stays until the region goes (B18). A device that still has its pages pinned
// keeps them until it unpins them, as the kernel keeps pinned pages.
// Thread safety: buffer() may be read from several threads at once.
// Gpu::free of it (or the Gpu's close) gives it back at once; a HostBuffer taken from it
// before must not be used after.
class HostMemory {
public:
    // Throws std::invalid_argument once it was freed.
    const HostBuffer& buffer() const;
    std::uint64_t size() const { return buffer().size(); }

    struct State;

private:
    friend class Gpu;
    explicit HostMemory(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

// Where this process addresses a Memory's bytes itself, for frameworks that take a
// pointer and a device (DLPack's DLDevice: kDLCPU, kDLCUDA, kDLROCM).
struct Pointer {
    enum class Device : std::uint8_t {
        Host,  // the process's own memory: the simulated GPU's VRAM lives in this process
        Cuda,  // a CUDA device pointer (unified addressing: the Space address)
        Rocm,  // a HIP device pointer (the Space address)
    };
    Device device = Device::Host;
    int ordinal = 0;            // the GPU's index among its backend's devices; 0 for Host
    std::byte* data = nullptr;  // the memory's first byte
};

// GPU memory at an address of its vendor's Space, allocated by one GPU (its owner) or
// mapped by a peer at the same address. A handle: copies name the same memory.
class Memory {
public:
    // Its first address in the vendor's Space.
    std::int64_t address() const;
    // Its size in bytes, as alloc was asked (the GPU may hold more, up to its granularity).
    std::uint64_t bytes() const;
    // The GPU that allocated it or maps it, "0000:41:00.0 (NVIDIA H200)", for messages.
    const std::string& gpu() const;

    // The runs of bytes [offset, offset + n) of the memory, on the bus of the GPU that
    // owns it (a peer's mapping gives the owner's runs: the bytes live there): the way a
    // NIC driven from user space reaches it. Each backend says whether it can:
    //  - the simulated GPU: exact runs behind its BAR; Error with the BAR's and the
    //    memory's sizes and what is free of the BAR for bytes past the BAR (B16);
    //  - HIP: through /proc/self/pagemap of the CPU-visible VRAM buffer object; Error
    //    where the process may not read physical frame numbers;
    //  - CUDA: never; Error saying NVIDIA's driver maps BAR1 only for kernel importers,
    //    and that dmabuf() serves one (ibv_reg_dmabuf_mr).
    // Throws std::invalid_argument if n is 0, the range does not lie in the memory, or the
    // memory was freed.
    Result<Runs> runs(std::uint64_t offset, std::uint64_t n) const;
    Result<Runs> runs() const { return runs(0, bytes()); }

    // Where the process addresses all its bytes as one range (Pointer): the simulated GPU's
    // VRAM through its BAR2 mapping, a CUDA or HIP device pointer. Nothing is copied: a
    // write there is a write to the GPU's memory. The pointer is good while the memory is
    // neither freed nor its last handle gone. Error naming the GPU and the size where the
    // process sees no one range: the simulated GPU's memory in several pieces of VRAM or
    // past BAR2, a BAR2 not mapped into this process (a remote machine), a backend that
    // gives no pointer. Throws std::invalid_argument if the memory was freed.
    Result<Pointer> pointer() const;

    // A dma-buf of bytes [offset, offset + n) (pages rounded as runs rounds them), for a
    // NIC driver in the kernel to map. Error naming the GPU where the platform exports
    // none (the simulated GPU; Debian's ROCm 5.2 has no export of HIP memory but libdrm's
    // of the buffer object) or refuses this range. Throws as runs does.
    Result<Dmabuf> dmabuf(std::uint64_t offset, std::uint64_t n) const;

    struct State;

private:
    friend class Gpu;
    explicit Memory(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

class Gpu {
public:
    // A GPU driven by `backend` allocating at addresses of `space` (its vendor's). For
    // backends (rig/gpu/backend.hpp); users call a backend's open.
    Gpu(std::shared_ptr<Backend> backend, std::shared_ptr<Space> space);

    // What its driver calls it ("NVIDIA H200", "rig sim GPU").
    const std::string& name() const;
    // Its bus address on its machine, "0000:41:00.0".
    const std::string& bus() const;
    // The vendor's Space its memory lies in.
    const std::shared_ptr<Space>& space() const;

    // `bytes` bytes of its memory at a free address of the Space, reachable through its
    // memory BAR (runs) where the backend publishes runs and the memory lies behind the
    // BAR (a BAR smaller than the GPU's memory leaves the rest without runs: runs says so).
    // Its contents are undefined. Error naming the GPU and the size: out of memory; no
    // free range in the Space; a Space address the driver would not map. Throws
    // std::invalid_argument if bytes is 0.
    Result<Memory> alloc(std::uint64_t bytes) const;

    // `memory` of another GPU of the same vendor (same Space), mapped for this GPU at the
    // same address, so that this GPU's copies, fill and checksum reach it (through the bus
    // where the memory lies on a peer). Error naming both GPUs where the bus or the driver
    // does not let this GPU reach it. Throws std::invalid_argument if memory is freed, is
    // in another Space, or is already this GPU's.
    Result<Memory> map(const Memory& memory) const;

    // Gives back this GPU's hold on memory it allocated or mapped (its Space range goes
    // back with the last hold). Freeing memory again does nothing. Error, and nothing
    // given back, while a device region covers any of its bytes (B18): the message names
    // the region, its NIC and the bus addresses it covers; deregister the region first.
    // Throws std::invalid_argument for memory this GPU neither allocated nor mapped.
    Result<void> free(const Memory& memory) const;
    // Gives host memory (host) back to the GPU's driver; its buffer() throws afterwards.
    // Freeing it again does nothing. Error, and nothing given back, while a region over
    // its pages (Region::pages) covers any of them, naming the region, its NIC and the
    // process addresses. Throws std::invalid_argument for host memory of another GPU.
    Result<void> free(const HostMemory& memory) const;

    // Frees every memory this GPU allocated or mapped and every host memory it gave, as
    // free does, after which alloc, map and host throw std::invalid_argument. Error, and
    // nothing freed, while a region covers any of them, as free says. Closing again does
    // nothing. The driver's state goes with the last handle of the Gpu or of its memory.
    Result<void> close() const;

    // `bytes` bytes (at least; the simulated GPU rounds up to its machine's page) of host
    // memory pinned for this GPU's copy engine (HostMemory). Its contents are undefined.
    // Error naming the GPU and the size where its driver has no host memory for it (the
    // simulated GPU: its machine, Function::alloc_dma), or gave memory not on a page.
    // Throws std::invalid_argument if bytes is 0.
    Result<HostMemory> host(std::uint64_t bytes) const;

    // Copies `bytes` into the memory from byte `offset` on. Error naming the GPU where the
    // copy failed. Throws std::invalid_argument if the bytes do not lie in the memory,
    // or the memory is freed or not this GPU's.
    Result<void> upload(const Memory& memory, std::uint64_t offset, std::span<const std::byte> bytes) const;
    // Copies out.size() bytes of the memory from byte `offset` on into `out`. As upload.
    Result<void> download(const Memory& memory, std::uint64_t offset, std::span<std::byte> out) const;

    // The copy engine copies n bytes from byte `offset` of the memory to byte
    // `host_offset` of `host` (copy_to_host), or back (copy_from_host), by DMA over the
    // bus. Error naming the GPU, the size and the bus address where the DMA faulted (the
    // simulated GPU), or the driver's status; Error where this backend cannot reach `host`
    // (the simulated GPU needs runs; CUDA and HIP a mapped window). Throws
    // std::invalid_argument if either range does not lie in its memory, or `host`'s runs
    // do not cover its window.
    Result<void> copy_to_host(const Memory& memory, std::uint64_t offset, const HostBuffer& host,
                              std::uint64_t host_offset, std::uint64_t n) const;
    Result<void> copy_from_host(const HostBuffer& host, std::uint64_t host_offset, const Memory& memory,
                                std::uint64_t offset, std::uint64_t n) const;

    // Writes the fill pattern of `seed` (rig/gpu/pattern.hpp) over bytes
    // [offset, offset + n) of the memory, on the GPU; the whole memory without a range.
    Result<void> fill(const Memory& memory, std::uint64_t offset, std::uint64_t n, std::uint64_t seed) const;
    Result<void> fill(const Memory& memory, std::uint64_t seed) const;
    // The checksum (rig/gpu/pattern.hpp) of bytes [offset, offset + n), computed on the GPU.
    Result<std::uint64_t> checksum(const Memory& memory, std::uint64_t offset, std::uint64_t n) const;
    Result<std::uint64_t> checksum(const Memory& memory) const;

    struct State;

private:
    std::shared_ptr<State> state_;
};

}  // namespace rig::gpu

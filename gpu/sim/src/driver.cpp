// The simulated GPU's driver (rig/gpu/sim.hpp), from registers.hpp alone: it reaches the
// GPU through rig::pci::Function and its Windows, as it would reach hardware.
//
// open: take, Function Level Reset (no segment a dead process left survives it), Memory
// Space and Bus Master on, check the ID register, map BAR0 and BAR2.
// alloc: VRAM extents (extents.hpp), then one segment per extent at its place in the VA
// range; any refusal gives back what was taken. Every register sequence (a segment store,
// a command) runs under the device's lock: the staged registers are one set per GPU.
#include "rig/gpu/sim.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "extents.hpp"
#include "rig/gpu/backend.hpp"
#include "rig/gpu/sim/registers.hpp"
#include "rig/pci/function.hpp"
#include "rig/space.hpp"
#include "rig/text.hpp"

namespace rig::gpu::sim {
namespace {

using reg::FaultKind;
using reg::Opcode;
using reg::SegmentKind;
using reg::SegmentStatus;
using reg::Status;

constexpr std::uint64_t granule = 64 * 1024;  // the GPU page the driver maps in
constexpr auto engine_timeout = std::chrono::seconds(60);

std::string hex(std::uint64_t value) { return text::hex(value); }

std::string_view to_string(SegmentStatus s) {
    switch (s) {
    case SegmentStatus::ok: return "ok";
    case SegmentStatus::bad_index: return "no such entry";
    case SegmentStatus::unaligned: return "not on a page";
    case SegmentStatus::outside_vram: return "past the end of VRAM";
    case SegmentStatus::overlap: return "overlaps another entry";
    case SegmentStatus::bad_kind: return "unknown kind";
    }
    return "unknown status";
}

std::string_view to_string(FaultKind k) {
    switch (k) {
    case FaultKind::none: return "no fault";
    case FaultKind::translation: return "page fault: no segment maps the address";
    case FaultKind::unsupported_request: return "Unsupported Request";
    case FaultKind::completer_abort: return "Completer Abort";
    case FaultKind::bad_command: return "the GPU refused the command";
    }
    return "unknown fault";
}

class Device;

// VRAM this GPU allocated, mapped at its Space address.
class Memory final : public Allocation {
public:
    Memory(std::shared_ptr<Device> owner, std::uint64_t at, std::uint64_t size)
        : device(std::move(owner)), address(at), bytes(size) {}
    ~Memory() override;
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;

    Result<std::vector<pci::Run>> runs(std::uint64_t offset, std::uint64_t n) const override;
    Result<Dmabuf> dmabuf(std::uint64_t offset, std::uint64_t n) const override;
    std::vector<pci::Run> reachable() const override;
    Result<Pointer> pointer() const override;

    const std::shared_ptr<Device> device;  // kept while the memory lives, mapped by peers included
    const std::uint64_t address, bytes;
    std::vector<Extent> extents;          // backing [address, address + bytes) in order
    std::vector<std::uint64_t> segments;  // the entries mapping them
};

// A peer's Memory this GPU reaches over the bus at the same address.
class Mapping final : public Allocation {
public:
    Mapping(std::shared_ptr<Device> by, std::shared_ptr<Allocation> of, const Memory& m)
        : device(std::move(by)), owner(std::move(of)), memory(m) {}
    ~Mapping() override;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;

    Result<std::vector<pci::Run>> runs(std::uint64_t offset, std::uint64_t n) const override {
        return owner->runs(offset, n);
    }
    Result<Dmabuf> dmabuf(std::uint64_t offset, std::uint64_t n) const override { return owner->dmabuf(offset, n); }
    std::vector<pci::Run> reachable() const override { return owner->reachable(); }
    // The owner's VRAM, where the bytes live.
    Result<Pointer> pointer() const override { return owner->pointer(); }

    const std::shared_ptr<Device> device;
    const std::shared_ptr<Allocation> owner;
    const Memory& memory;  // *owner
    std::vector<std::uint64_t> segments;
    std::vector<pci::Run> peers;  // the owner's BAR2 mapped in this GPU's IOMMU domain
};

// Host memory of the GPU's function (alloc_dma): its runs are where the engine reaches it,
// physical addresses or IOVAs of the GPU's IOMMU domain. The function handle keeps the GPU
// taken until the memory goes back.
class Pinned final : public HostAllocation {
public:
    Pinned(pci::Function function, pci::Dma dma)
        : HostAllocation(HostBuffer::of(dma)), function_(std::move(function)), dma_(std::move(dma)) {}
    ~Pinned() override {
        if (!function_.released()) function_.free_dma(dma_);
    }

private:
    pci::Function function_;
    pci::Dma dma_;
};

const Memory& owned(const Allocation& a) {
    if (const auto* m = dynamic_cast<const Memory*>(&a)) return *m;
    return static_cast<const Mapping&>(a).memory;
}

class Device final : public Backend, public std::enable_shared_from_this<Device> {
public:
    Device(pci::Function function, pci::Window registers, pci::Window vram, pci::DmaAddress bar,
           std::uint64_t memory_bytes, std::uint64_t segments)
        : Backend("rig sim GPU", function.bus()),
          function_(std::move(function)),
          registers_(std::move(registers)),
          vram_(std::move(vram)),
          bar_(bar),
          memory_bytes_(memory_bytes),
          extents_(memory_bytes / granule * granule) {
        for (std::uint64_t i = segments; i > 0; --i) free_segments_.push_back(i - 1);
    }

    std::uint64_t granularity() const override { return granule; }
    pci::Machine machine() const override { return function_.machine(); }

    // Segment table (registers.hpp: stage, then store at an index).

    Result<std::uint64_t> map_segment(std::uint64_t va, std::uint64_t bytes, std::uint64_t target, SegmentKind kind) {
        if (free_segments_.empty())
            return fail(label(), ": every entry of the segment table is in use; cannot map ", text::bytes(bytes),
                        " at ", hex(va));
        const std::uint64_t index = free_segments_.back();
        const auto status = store(index, va, bytes, target, kind);
        if (status != SegmentStatus::ok)
            return fail(label(), ": the GPU refused to map ", text::bytes(bytes), " at ", hex(va), " to ", hex(target),
                        ": ", to_string(status));
        free_segments_.pop_back();
        return index;
    }

    void unmap_segments(std::vector<std::uint64_t>& segments) {
        for (std::uint64_t index : segments) {
            store(index, 0, 0, 0, SegmentKind::none);
            free_segments_.push_back(index);
        }
        segments.clear();
    }

    // The engine: one command, polled to its end.

    Result<std::uint64_t> run(Opcode opcode, std::uint64_t va, std::uint64_t bus, std::uint64_t bytes,
                              std::uint64_t seed, const std::string& what) {
        registers_.write64(reg::cmd_va, va);
        registers_.write64(reg::cmd_bus, bus);
        registers_.write64(reg::cmd_bytes, bytes);
        registers_.write64(reg::cmd_seed, seed);
        registers_.write64(reg::cmd_opcode, std::to_underlying(opcode));
        const auto deadline = std::chrono::steady_clock::now() + engine_timeout;
        std::uint64_t status = registers_.read64(reg::status);
        while (status == std::to_underlying(Status::busy)) {
            if (std::chrono::steady_clock::now() > deadline)
                return fail(label(), ": the engine did not finish ", what, " within ", text::duration(engine_timeout));
            std::this_thread::yield();
            status = registers_.read64(reg::status);
        }
        if (status == std::to_underlying(Status::done)) return registers_.read64(reg::result);
        if (status == std::to_underlying(Status::fault)) {
            const auto kind = static_cast<FaultKind>(registers_.read64(reg::fault_kind));
            const std::uint64_t at = registers_.read64(reg::fault_address);
            const char* where = kind == FaultKind::translation ? "VA " : "bus address ";
            return fail(label(), ": the engine faulted ", what, " at ", where, hex(at), ": ", to_string(kind));
        }
        if (auto why = registers_.failed()) return fail(label(), ": stopped answering ", what, ": ", *why);
        return fail(label(), ": the engine reads status ", hex(status), " ", what, " (the GPU stopped answering)");
    }

    // Backend.

    Result<std::shared_ptr<Allocation>> alloc(std::int64_t at, std::uint64_t bytes) override {
        const auto address = static_cast<std::uint64_t>(at);
        // Declared before the lock, so that a failure gives it back (~Memory locks) after
        // the lock is let go.
        auto memory = std::make_shared<Memory>(shared_from_this(), address, bytes);
        std::lock_guard lock(mutex_);
        auto extents = extents_.take(bytes);
        if (!extents)
            return fail(label(), ": out of memory for ", text::bytes(bytes), " (", text::bytes(extents_.free()),
                        " free of its ", text::bytes(memory_bytes_), ")");
        memory->extents = std::move(*extents);
        std::uint64_t va = address;
        for (const Extent& e : memory->extents) {
            auto index = map_segment(va, e.bytes, e.offset, SegmentKind::vram);
            if (!index) return std::unexpected(std::move(index).error());
            memory->segments.push_back(*index);
            va += e.bytes;
        }
        return memory;
    }

    Result<std::shared_ptr<Allocation>> map(const std::shared_ptr<Allocation>& peer, std::int64_t at,
                                            std::uint64_t bytes) override {
        const auto address = static_cast<std::uint64_t>(at);
        const auto* owner = dynamic_cast<const Memory*>(peer.get());
        if (owner == nullptr)
            throw std::invalid_argument("sim GPU: " + label() + " cannot map memory of another kind of GPU at " +
                                        hex(address));
        const Memory& memory = *owner;
        // The owner's BAR2 is the provider, this GPU the client (docs/p2pdma.md §2).
        const pci::Route route = function_.machine().route(memory.device->bus(), bus());
        if (!route.forwards())
            return fail(label(), ": cannot reach the ", text::bytes(bytes), " at ", hex(address), " of ",
                        memory.device->label(), ": the bus does not forward between them: ", route.explain());
        auto runs = memory.runs(0, bytes);
        if (!runs) return std::unexpected(std::move(runs).error());
        auto mapping = std::make_shared<Mapping>(shared_from_this(), peer, memory);  // before the lock, as in alloc
        // Through the host bridge behind an IOMMU, this GPU's requests carry IOVAs its
        // domain maps to the owner's BAR2 (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE); else the bus
        // addresses, which a switch takes to the BAR or the root complex sees untranslated.
        if (route.verdict == pci::Verdict::ThroughHostBridge && function_.addressing() == pci::Addressing::Iommu) {
            for (pci::Run& run : *runs) {
                auto iova = function_.map_peer(memory.device->bus(), reg::memory_bar,
                                               run.address.value - memory.device->bar().value, run.bytes);
                if (!iova)
                    return fail(label(), ": cannot reach the ", text::bytes(bytes), " at ", hex(address), " of ",
                                memory.device->label(), " through the host bridge: ", iova.error());
                mapping->peers.push_back(*iova);
                run = *iova;
            }
        }
        std::lock_guard lock(mutex_);
        std::uint64_t va = address;
        for (const pci::Run& run : *runs) {
            auto index = map_segment(va, run.bytes, run.address.value, SegmentKind::bus);
            if (!index) return std::unexpected(std::move(index).error());
            mapping->segments.push_back(*index);
            va += run.bytes;
        }
        return mapping;
    }

    Result<std::shared_ptr<HostAllocation>> host(std::uint64_t bytes) override {
        auto dma = function_.alloc_dma(bytes, pci::Contiguity::Any);
        if (!dma)
            return fail(label(), ": no host memory of ", text::bytes(bytes), " for its copy engine: ", dma.error());
        return std::make_shared<Pinned>(function_, std::move(*dma));
    }

    // Upload and download go through the BAR2 window of the GPU that owns the memory, where
    // the bytes lie behind it; memory past the BAR (only this GPU's own: a peer maps only
    // memory with runs) goes through a staging buffer of host memory and the engine, as a
    // driver of a GPU whose BAR is smaller than its memory copies.
    Result<void> upload(Allocation& a, std::uint64_t offset, std::span<const std::byte> bytes) override {
        const Memory& m = owned(a);
        if (!m.device->behind_bar(m, offset, bytes.size())) return through_engine(m, offset, bytes, {});
        m.device->through_bar(m, offset, bytes.size(), [&](std::uint64_t at, std::uint64_t done, std::uint64_t n) {
            m.device->vram_.write(at, bytes.subspan(done, n));
        });
        return m.device->answering("uploading", bytes.size());
    }
    Result<void> download(Allocation& a, std::uint64_t offset, std::span<std::byte> out) override {
        const Memory& m = owned(a);
        if (!m.device->behind_bar(m, offset, out.size())) return through_engine(m, offset, {}, out);
        m.device->through_bar(m, offset, out.size(), [&](std::uint64_t at, std::uint64_t done, std::uint64_t n) {
            m.device->vram_.read(at, out.subspan(done, n));
        });
        return m.device->answering("downloading", out.size());
    }

    Result<void> copy_to_host(Allocation& a, std::uint64_t offset, const HostBuffer& host, std::uint64_t host_offset,
                              std::uint64_t n) override {
        return copy_host(a, offset, host, host_offset, n, Opcode::copy_to_bus,
                         "copying " + text::bytes(n) + " to host memory");
    }
    Result<void> copy_from_host(const HostBuffer& host, std::uint64_t host_offset, Allocation& a, std::uint64_t offset,
                                std::uint64_t n) override {
        return copy_host(a, offset, host, host_offset, n, Opcode::copy_from_bus,
                         "copying " + text::bytes(n) + " from host memory");
    }

    Result<void> fill(Allocation& a, std::uint64_t offset, std::uint64_t n, std::uint64_t seed) override {
        std::lock_guard lock(mutex_);
        auto r = run(Opcode::fill, owned(a).address + offset, 0, n, seed, "filling " + text::bytes(n));
        if (!r) return std::unexpected(std::move(r).error());
        return {};
    }
    Result<std::uint64_t> checksum(Allocation& a, std::uint64_t offset, std::uint64_t n) override {
        std::lock_guard lock(mutex_);
        return run(Opcode::checksum, owned(a).address + offset, 0, n, 0, "checksumming " + text::bytes(n));
    }

    pci::DmaAddress bar() const { return bar_; }
    std::uint64_t bar_bytes() const { return vram_.size(); }
    const pci::Window& vram() const { return vram_; }
    std::uint64_t memory_bytes() const { return memory_bytes_; }
    std::uint64_t bar_free() {
        std::lock_guard lock(mutex_);
        return extents_.free_below(vram_.size());
    }
    // Called by ~Mapping once its segments are gone: the peer BAR mappings go back.
    void unmap_peers(const std::vector<pci::Run>& peers) {
        if (function_.released()) return;
        for (const pci::Run& run : peers) function_.unmap_peer(run);
    }
    // Called by ~Memory and ~Mapping: their segments and VRAM go back.
    void release(std::vector<std::uint64_t>& segments, const std::vector<Extent>& extents) {
        std::lock_guard lock(mutex_);
        unmap_segments(segments);
        extents_.give(extents);
    }

private:
    SegmentStatus store(std::uint64_t index, std::uint64_t va, std::uint64_t bytes, std::uint64_t target,
                        SegmentKind kind) {
        registers_.write64(reg::seg_va, va);
        registers_.write64(reg::seg_bytes, bytes);
        registers_.write64(reg::seg_target, target);
        registers_.write64(reg::seg_kind, std::to_underlying(kind));
        registers_.write64(reg::seg_index, index);
        return static_cast<SegmentStatus>(registers_.read64(reg::seg_status));
    }

    // Calls each(VRAM offset, bytes done, n) for the pieces of bytes [offset, offset + n)
    // of `m`, extent by extent.
    template <class Each>
    static void through_bar(const Memory& m, std::uint64_t offset, std::uint64_t n, Each each) {
        std::uint64_t skip = offset, done = 0;
        for (const Extent& e : m.extents) {
            if (done == n) break;
            if (skip >= e.bytes) {
                skip -= e.bytes;
                continue;
            }
            const std::uint64_t piece = std::min(e.bytes - skip, n - done);
            each(e.offset + skip, done, piece);
            done += piece;
            skip = 0;
        }
    }

    // Whether bytes [offset, offset + n) of `m` all lie behind BAR2.
    static bool behind_bar(const Memory& m, std::uint64_t offset, std::uint64_t n) {
        bool inside = true;
        through_bar(m, offset, n, [&](std::uint64_t at, std::uint64_t, std::uint64_t piece) {
            inside = inside && at + piece <= m.device->vram_.size();
        });
        return inside;
    }

    // Upload (`in`) or download (`out`) of bytes of this GPU's memory `m` from `offset`, a
    // staging buffer at a time: the engine copies between the buffer's bus address and
    // the memory's VA.
    Result<void> through_engine(const Memory& m, std::uint64_t offset, std::span<const std::byte> in,
                                std::span<std::byte> out) {
        const bool up = !in.empty();
        const std::uint64_t n = up ? in.size() : out.size();
        const std::string what = std::string(up ? "uploading " : "downloading ") + text::bytes(n) + " past BAR2";
        std::lock_guard lock(mutex_);
        if (!staging_) {
            auto dma = function_.alloc_dma(staging_bytes, pci::Contiguity::Contiguous);
            if (!dma) return fail(label(), ": no host memory to stage ", what, " through: ", dma.error());
            staging_ = std::move(*dma);
        }
        const pci::DmaAddress bus = staging_->runs.front().address;
        for (std::uint64_t done = 0; done < n; done += staging_bytes) {
            const std::uint64_t piece = std::min(staging_bytes, n - done);
            if (up) staging_->window.write(0, in.subspan(done, piece));
            auto r = run(up ? Opcode::copy_from_bus : Opcode::copy_to_bus, m.address + offset + done, bus.value, piece,
                         0, what);
            if (!r) return std::unexpected(std::move(r).error());
            if (!up) staging_->window.read(0, out.subspan(done, piece));
        }
        return {};
    }

    Result<void> answering(const char* what, std::uint64_t bytes) const {
        if (auto why = vram_.failed())
            return fail(label(), ": stopped answering ", what, " ", text::bytes(bytes), ": ", *why);
        return {};
    }

    // One engine command per piece of a host run that [host_offset, host_offset + n) covers.
    Result<void> copy_host(Allocation& a, std::uint64_t offset, const HostBuffer& host, std::uint64_t host_offset,
                           std::uint64_t n, Opcode opcode, const std::string& what) {
        if (host.runs.empty())
            return fail(label(),
                        ": the engine reaches host memory only by DMA, at bus addresses; this HostBuffer has no runs (",
                        what, ")");
        const std::uint64_t va = owned(a).address + offset;
        std::lock_guard lock(mutex_);
        std::uint64_t skip = host_offset, done = 0;
        for (const pci::Run& run : host.runs) {
            if (done == n) break;
            if (skip >= run.bytes) {
                skip -= run.bytes;
                continue;
            }
            const std::uint64_t piece = std::min(run.bytes - skip, n - done);
            auto r = this->run(opcode, va + done, run.address.value + skip, piece, 0, what);
            if (!r) return std::unexpected(std::move(r).error());
            done += piece;
            skip = 0;
        }
        return {};
    }

    pci::Function function_;
    pci::Window registers_;
    pci::Window vram_;  // BAR2
    pci::DmaAddress bar_;
    std::uint64_t memory_bytes_;
    std::mutex mutex_;  // the staged registers, the extents, the free segment entries, staging
    Extents extents_;
    static constexpr std::uint64_t staging_bytes = 256 * 1024;
    std::optional<pci::Dma> staging_;  // host memory uploads and downloads past BAR2 go through
    std::vector<std::uint64_t> free_segments_;
};

Memory::~Memory() { device->release(segments, extents); }

// The process sees VRAM through BAR2's mapping: one range where the memory is one extent
// behind the BAR.
Result<Pointer> Memory::pointer() const {
    const pci::Window& vram = device->vram();
    if (!vram.is_mapped()) return fail("BAR2 is not mapped into this process (a machine behind a transport)");
    if (extents.size() != 1)
        return fail("its ", text::bytes(bytes), " at ", hex(address), " lie in ", std::to_string(extents.size()),
                    " pieces of VRAM, which the process sees as no one range");
    const Extent& e = extents.front();
    if (e.offset + e.bytes > vram.size())
        return fail("its ", text::bytes(bytes), " at ", hex(address), " lie past BAR2 (", text::bytes(vram.size()),
                    ")");
    return Pointer{Pointer::Device::Host, 0, vram.data() + e.offset};
}

Mapping::~Mapping() {
    device->release(segments, {});
    device->unmap_peers(peers);
}

// B16: a GPU's memory BAR may be smaller than its memory (a 256 MiB BAR1 before 80 GiB):
// bytes past the BAR have no bus address, so no NIC can reach them.
Result<std::vector<pci::Run>> Memory::runs(std::uint64_t offset, std::uint64_t n) const {
    std::vector<pci::Run> runs;
    std::uint64_t skip = offset, done = 0;
    const std::uint64_t bar_bytes = device->bar_bytes();
    for (const Extent& e : extents) {
        if (done == n) break;
        if (skip >= e.bytes) {
            skip -= e.bytes;
            continue;
        }
        const std::uint64_t piece = std::min(e.bytes - skip, n - done);
        const std::uint64_t vram = e.offset + skip;
        if (vram + piece > bar_bytes) {
            const std::uint64_t first = offset + done + (vram < bar_bytes ? bar_bytes - vram : 0);
            return fail(device->label(), ": bytes [", hex(first), ", ", hex(offset + n), ") of the ",
                        text::bytes(bytes), " at ", hex(address),
                        " lie outside BAR2, so no NIC can reach them: BAR2 is ", text::bytes(bar_bytes),
                        " of the GPU's ", text::bytes(device->memory_bytes()), " of memory, with ",
                        text::bytes(device->bar_free()), " of it free");
        }
        const pci::DmaAddress at = device->bar() + vram;
        if (!runs.empty() && runs.back().address + runs.back().bytes == at) runs.back().bytes += piece;
        else runs.push_back({at, piece});
        done += piece;
        skip = 0;
    }
    return runs;
}

std::vector<pci::Run> Memory::reachable() const {
    std::vector<pci::Run> runs;
    const std::uint64_t bar_bytes = device->bar_bytes();
    for (const Extent& e : extents)
        if (e.offset < bar_bytes) runs.push_back({device->bar() + e.offset, std::min(e.bytes, bar_bytes - e.offset)});
    return runs;
}

Result<Dmabuf> Memory::dmabuf(std::uint64_t, std::uint64_t n) const {
    return fail(device->label(), ": the simulated GPU exports no dma-buf (", text::bytes(n),
                " asked): a NIC reaches its memory at the bus addresses of Memory::runs");
}

}  // namespace

Result<Gpu> open(const pci::Machine& machine, std::string_view bus, std::shared_ptr<Space> space) {
    if (!space) throw std::invalid_argument("sim::open: no Space");
    auto function = pci::Function::take(machine, bus);
    if (!function) return std::unexpected(std::move(function).error());
    pci::Function& f = *function;
    if (const std::uint32_t class_code = f.config32(0x08) >> 8; class_code != reg::class_code)
        return fail(f.bus(), ": not the simulated GPU (class code ", text::hex(class_code, 6), ", not ",
                    text::hex(reg::class_code, 6), ")");
    // A Function Level Reset clears the segment table a previous driver left; Memory Space
    // and Bus Master are ours to turn on again after it.
    if (auto r = f.reset(); !r) return std::unexpected(std::move(r).error());
    f.set_memory_space(true);
    f.set_bus_master(true);
    const auto bar0 = f.bar(reg::register_bar);
    const auto bar2 = f.bar(reg::memory_bar);
    if (!bar0 || !bar2 || bar0->bytes < reg::register_bar_bytes)
        return fail(f.bus(), ": not the simulated GPU (no register BAR0 of ", text::bytes(reg::register_bar_bytes),
                    " and memory BAR2)");
    auto registers = f.map(reg::register_bar, 0, reg::register_bar_bytes);
    if (!registers) return fail(f.bus(), ": BAR0: ", registers.error());
    if (const std::uint64_t id = registers->read64(reg::id); id != reg::magic)
        return fail(f.bus(), ": not the simulated GPU (ID register ", text::hex(id), ")");
    const std::uint64_t bar_bytes = registers->read64(reg::bar_bytes);
    if (bar_bytes != bar2->bytes)
        return fail(f.bus(), ": the GPU says BAR2 is ", text::bytes(bar_bytes), ", its configuration ",
                    text::bytes(bar2->bytes));
    auto vram = f.map(reg::memory_bar, 0, bar2->bytes, pci::Caching::WriteCombining);
    if (!vram) return fail(f.bus(), ": BAR2: ", vram.error());
    const std::uint64_t segments = registers->read64(reg::segments);
    const std::uint64_t memory_bytes = registers->read64(reg::memory_bytes);
    if (memory_bytes < bar_bytes)
        return fail(f.bus(), ": the GPU says it has ", text::bytes(memory_bytes), " of memory, less than its BAR2 of ",
                    text::bytes(bar_bytes));
    auto device = std::make_shared<Device>(f, *registers, *vram, bar2->address, memory_bytes, segments);
    return Gpu(std::move(device), std::move(space));
}

}  // namespace rig::gpu::sim

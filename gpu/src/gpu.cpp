// Gpu and Memory (rig/gpu/gpu.hpp): the checks every backend shares, the Space addresses,
// and the page rounding of runs. A backend sees only arguments these checks let through
// (rig/gpu/backend.hpp).
//
// Ownership: a Memory handle's State owns a Held, which owns the backend's Allocation and
// the Space hold. A copy in flight holds the Held too, so a free during the copy takes
// effect when it ends. The Held gives the allocation back before the hold, so the Space
// hands an address out again only once the driver has let go of it.
#include "rig/gpu/gpu.hpp"

#include <unistd.h>

#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "rig/gpu/backend.hpp"
#include "rig/space.hpp"
#include "rig/text.hpp"

namespace rig::gpu {
namespace {

constexpr std::uint64_t page = 4096;  // the unit of a NIC's runs (seeds/000, Region::device)

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }

// The backend's memory and the Space range it lies at, given back in that order. It keeps
// a copy of the GPU's Holder: the last copy of a Holder gives back all its holds.
struct Held {
    std::shared_ptr<Allocation> allocation;
    std::shared_ptr<Allocation> owners;  // a mapping's: the allocation of the GPU that owns the memory
    Hold hold;
    Holder holder;
    Held(std::shared_ptr<Allocation> a, std::shared_ptr<Allocation> o, Hold h, Holder by)
        : allocation(std::move(a)), owners(std::move(o)), hold(std::move(h)), holder(std::move(by)) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
        allocation.reset();
        owners.reset();
        rig::free(hold);
    }
    // What a peer maps: the owner's allocation, not another peer's mapping of it.
    const std::shared_ptr<Allocation>& source() const { return owners ? owners : allocation; }
};

}  // namespace

struct Gpu::State {
    std::shared_ptr<Backend> backend;
    std::shared_ptr<Space> space;
    Holder holder;
};

struct Memory::State {
    const Backend* backend = nullptr;  // the GPU that allocated or maps it
    const Backend* owner = nullptr;    // the GPU that allocated it
    std::shared_ptr<Backend> keep;     // keeps that GPU's driver state while the memory lives
    std::shared_ptr<Space> space;
    std::int64_t address = 0;
    std::uint64_t bytes = 0;
    std::uint64_t held = 0;  // bytes rounded up to the backend's granularity
    mutable std::mutex mutex;
    std::shared_ptr<Held> held_by;  // null once freed

    std::shared_ptr<Held> use(const char* what) const {
        std::lock_guard lock(mutex);
        if (!held_by)
            throw std::invalid_argument(std::string(what) + ": the memory at " + text::hex(static_cast<std::uint64_t>(address)) +
                                        " of " + backend->label() + " was freed");
        return held_by;
    }
    void check_range(const char* what, std::uint64_t offset, std::uint64_t n) const {
        if (offset > bytes || n > bytes - offset)
            throw std::invalid_argument(std::string(what) + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                                        std::to_string(n) + ") do not lie in the " + text::bytes(bytes) + " at " +
                                        text::hex(static_cast<std::uint64_t>(address)) + " of " + backend->label());
    }
};

Result<std::byte*> Backend::process_bytes(const HostBuffer& host, std::uint64_t offset, std::uint64_t n) const {
    if (!host.window.is_mapped())
        return fail(label(), ": copies ", text::bytes(n), " only to host memory the process maps; this HostBuffer's window is remote");
    return host.window.data() + offset;
}

// Dmabuf

Dmabuf::Dmabuf(Dmabuf&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), bytes_(other.bytes_), offset_(other.offset_) {}

Dmabuf& Dmabuf::operator=(Dmabuf&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        bytes_ = other.bytes_;
        offset_ = other.offset_;
    }
    return *this;
}

Dmabuf::~Dmabuf() {
    if (fd_ >= 0) ::close(fd_);
}

// Memory

std::int64_t Memory::address() const { return state_->address; }
std::uint64_t Memory::bytes() const { return state_->bytes; }
const std::string& Memory::gpu() const { return state_->backend->label(); }

namespace {

// Bytes [offset, offset + n) of a memory rounded out to pages: what runs and dmabuf ask a
// backend for, and where the range's first byte lies in them.
struct Pages {
    std::shared_ptr<Held> held;
    std::uint64_t first = 0, bytes = 0, offset = 0;
};

Pages pages(const Memory::State& memory, const char* what, std::uint64_t offset, std::uint64_t n) {
    if (n == 0)
        throw std::invalid_argument(std::string(what) + ": 0 bytes of the memory at " + text::hex(static_cast<std::uint64_t>(memory.address)));
    memory.check_range(what, offset, n);
    const std::uint64_t first = offset / page * page;
    return {memory.use(what), first, round_up(offset + n, page) - first, offset - first};
}

}  // namespace

Result<Runs> Memory::runs(std::uint64_t offset, std::uint64_t n) const {
    const Pages p = pages(*state_, "Memory::runs", offset, n);
    auto runs = p.held->allocation->runs(p.first, p.bytes);
    if (!runs) return std::unexpected(std::move(runs).error());
    return Runs{std::move(*runs), p.offset};
}

Result<Dmabuf> Memory::dmabuf(std::uint64_t offset, std::uint64_t n) const {
    const Pages p = pages(*state_, "Memory::dmabuf", offset, n);
    auto buf = p.held->allocation->dmabuf(p.first, p.bytes);
    if (!buf) return std::unexpected(std::move(buf).error());
    const std::uint64_t bytes = buf->bytes(), at = buf->offset() + p.offset;
    return Dmabuf(buf->release(), bytes, at);
}

// HostMemory

const HostBuffer& HostMemory::buffer() const { return allocation_->buffer; }

// Gpu

Gpu::Gpu(std::shared_ptr<Backend> backend, std::shared_ptr<Space> space) : state_(std::make_shared<State>()) {
    if (!backend || !space) throw std::invalid_argument("Gpu: no backend or no Space");
    state_->backend = std::move(backend);
    state_->space = std::move(space);
}

const std::string& Gpu::name() const { return state_->backend->name(); }
const std::string& Gpu::bus() const { return state_->backend->bus(); }
const std::shared_ptr<Space>& Gpu::space() const { return state_->space; }

namespace {

// The memory's Held after checking it is `backend`'s and the range lies in it.
std::shared_ptr<Held> checked(const Memory::State& memory, const Backend& backend, const char* what, std::uint64_t offset,
                              std::uint64_t n) {
    if (memory.backend != &backend)
        throw std::invalid_argument(std::string(what) + ": the memory at " + text::hex(static_cast<std::uint64_t>(memory.address)) +
                                    " is " + memory.backend->label() + "'s, not " + backend.label() + "'s");
    memory.check_range(what, offset, n);
    return memory.use(what);
}

void check_host(const HostBuffer& host, std::uint64_t host_offset, std::uint64_t n, const char* what) {
    if (host_offset > host.size() || n > host.size() - host_offset)
        throw std::invalid_argument(std::string(what) + ": bytes [" + std::to_string(host_offset) + ", " + std::to_string(host_offset) +
                                    " + " + std::to_string(n) + ") do not lie in the " + text::bytes(host.size()) + " of host memory");
    if (host.runs.empty()) return;
    std::uint64_t covered = 0;
    for (const auto& run : host.runs) covered += run.bytes;
    if (covered < host.size())
        throw std::invalid_argument(std::string(what) + ": the host memory's runs cover " + text::bytes(covered) + " of its " +
                                    text::bytes(host.size()));
}

}  // namespace

Result<Memory> Gpu::alloc(std::uint64_t bytes) const {
    const Backend& backend = *state_->backend;
    if (bytes == 0) throw std::invalid_argument("Gpu::alloc: 0 bytes on " + backend.label());
    const std::uint64_t granularity = backend.granularity();
    if (bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - granularity)
        return fail(backend.label(), ": no Space range of ", text::bytes(bytes), " (larger than any address space)");
    const std::uint64_t held = round_up(bytes, granularity);
    auto hold = rig::alloc(*state_->space, state_->holder, static_cast<std::int64_t>(held), static_cast<std::int64_t>(granularity));
    if (!hold)
        return fail(backend.label(), ": the Space [", text::hex(static_cast<std::uint64_t>(state_->space->base())), " + ",
                    text::bytes(static_cast<std::uint64_t>(state_->space->length())), ") has no free range for ", text::bytes(bytes));
    const std::int64_t address = rig::address(*hold);
    auto allocation = state_->backend->alloc(address, held);
    if (!allocation) {
        rig::free(*hold);
        return std::unexpected(std::move(allocation).error());
    }
    auto memory = std::make_shared<Memory::State>();
    memory->backend = memory->owner = state_->backend.get();
    memory->keep = state_->backend;
    memory->space = state_->space;
    memory->address = address;
    memory->bytes = bytes;
    memory->held = held;
    memory->held_by = std::make_shared<Held>(std::move(*allocation), nullptr, std::move(*hold), state_->holder);
    return Memory(std::move(memory));
}

Result<Memory> Gpu::map(const Memory& memory) const {
    const Backend& backend = *state_->backend;
    const Memory::State& peer = *memory.state_;
    if (peer.space != state_->space)
        throw std::invalid_argument("Gpu::map: the memory at " + text::hex(static_cast<std::uint64_t>(peer.address)) + " of " +
                                    peer.backend->label() + " lies in another Space than " + backend.label() + "'s");
    if (peer.owner == &backend)
        throw std::invalid_argument("Gpu::map: the memory at " + text::hex(static_cast<std::uint64_t>(peer.address)) + " is already " +
                                    backend.label() + "'s");
    const auto held = peer.use("Gpu::map");
    auto hold = rig::share(state_->holder, held->hold);
    if (!hold)
        throw std::invalid_argument("Gpu::map: the memory at " + text::hex(static_cast<std::uint64_t>(peer.address)) + " of " +
                                    peer.backend->label() + " was freed");
    auto allocation = state_->backend->map(held->source(), peer.address, peer.held);
    if (!allocation) {
        rig::free(*hold);
        return std::unexpected(std::move(allocation).error());
    }
    auto mapped = std::make_shared<Memory::State>();
    mapped->backend = state_->backend.get();
    mapped->owner = peer.owner;
    mapped->keep = state_->backend;
    mapped->space = state_->space;
    mapped->address = peer.address;
    mapped->bytes = peer.bytes;
    mapped->held = peer.held;
    mapped->held_by = std::make_shared<Held>(std::move(*allocation), held->source(), std::move(*hold), state_->holder);
    return Memory(std::move(mapped));
}

void Gpu::free(const Memory& memory) const {
    Memory::State& state = *memory.state_;
    if (state.backend != state_->backend.get())
        throw std::invalid_argument("Gpu::free: the memory at " + text::hex(static_cast<std::uint64_t>(state.address)) + " is " +
                                    state.backend->label() + "'s, not " + state_->backend->label() + "'s");
    std::shared_ptr<Held> held;
    {
        std::lock_guard lock(state.mutex);
        held = std::move(state.held_by);
    }
    // `held` goes here unless a copy in flight still holds it.
}

Result<HostMemory> Gpu::host(std::uint64_t bytes) const {
    const Backend& backend = *state_->backend;
    if (bytes == 0) throw std::invalid_argument("Gpu::host: 0 bytes of host memory for " + backend.label());
    auto allocation = state_->backend->host(bytes);
    if (!allocation) return std::unexpected(std::move(allocation).error());
    // What a NIC pins must start on a page (Region::pages).
    const pci::Window& window = (*allocation)->buffer.window;
    if (const auto at = reinterpret_cast<std::uintptr_t>(window.data()); window.is_mapped() && at % page != 0)
        return fail(backend.label(), ": the driver gave host memory of ", text::bytes(bytes), " at ", text::hex(at),
                    ", which does not start on a page");
    return HostMemory(std::move(*allocation));
}

Result<void> Gpu::upload(const Memory& memory, std::uint64_t offset, std::span<const std::byte> bytes) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::upload", offset, bytes.size());
    if (bytes.empty()) return {};
    return state_->backend->upload(*held->allocation, offset, bytes);
}

Result<void> Gpu::download(const Memory& memory, std::uint64_t offset, std::span<std::byte> out) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::download", offset, out.size());
    if (out.empty()) return {};
    return state_->backend->download(*held->allocation, offset, out);
}

Result<void> Gpu::copy_to_host(const Memory& memory, std::uint64_t offset, const HostBuffer& host, std::uint64_t host_offset,
                               std::uint64_t n) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::copy_to_host", offset, n);
    check_host(host, host_offset, n, "Gpu::copy_to_host");
    if (n == 0) return {};
    return state_->backend->copy_to_host(*held->allocation, offset, host, host_offset, n);
}

Result<void> Gpu::copy_from_host(const HostBuffer& host, std::uint64_t host_offset, const Memory& memory, std::uint64_t offset,
                                 std::uint64_t n) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::copy_from_host", offset, n);
    check_host(host, host_offset, n, "Gpu::copy_from_host");
    if (n == 0) return {};
    return state_->backend->copy_from_host(host, host_offset, *held->allocation, offset, n);
}

Result<void> Gpu::fill(const Memory& memory, std::uint64_t offset, std::uint64_t n, std::uint64_t seed) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::fill", offset, n);
    if (n == 0) return {};
    return state_->backend->fill(*held->allocation, offset, n, seed);
}

Result<void> Gpu::fill(const Memory& memory, std::uint64_t seed) const { return fill(memory, 0, memory.bytes(), seed); }

Result<std::uint64_t> Gpu::checksum(const Memory& memory, std::uint64_t offset, std::uint64_t n) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::checksum", offset, n);
    if (n == 0) return std::uint64_t{0};  // pattern::finish(0, 0)
    return state_->backend->checksum(*held->allocation, offset, n);
}

Result<std::uint64_t> Gpu::checksum(const Memory& memory) const { return checksum(memory, 0, memory.bytes()); }

}  // namespace rig::gpu

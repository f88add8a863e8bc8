// Gpu and Memory (rig/gpu/gpu.hpp): the checks every backend shares, the Space addresses,
// and the page rounding of runs. A backend sees only arguments these checks let through
// (rig/gpu/backend.hpp).
//
// Ownership: a Memory handle's State owns a Held, which owns the backend's Allocation and
// the Space hold. A copy in flight holds the Held too, so a free during the copy takes
// effect when it ends. The Held gives the allocation back before the hold, so the Space
// hands an address out again only once the driver has let go of it; where a device
// region still claims the memory's runs, it hands both to the machine's Claims, which
// keep them until the claim goes (B18).
#include "rig/gpu/gpu.hpp"

#include <unistd.h>

#include <limits>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "rig/gpu/backend.hpp"
#include "rig/pci/claim.hpp"
#include "rig/pci/dma.hpp"
#include "rig/space.hpp"
#include "rig/text.hpp"

namespace rig::gpu {
namespace {

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }

std::vector<pci::Span> spans_of(const std::vector<pci::Run>& runs) {
    std::vector<pci::Span> spans;
    for (const pci::Run& run : runs) spans.push_back({run.address.value, run.bytes});
    return spans;
}

// The backend's memory and the Space range it lies at, given back in that order. It keeps
// a copy of the GPU's Holder: the last copy of a Holder gives back all its holds.
struct Given {
    std::shared_ptr<Allocation> allocation;
    std::shared_ptr<Allocation> owners;  // a mapping's: the allocation of the GPU that owns the memory
    Hold hold;
    Holder holder;
    Given(std::shared_ptr<Allocation> a, std::shared_ptr<Allocation> o, Hold h, Holder by)
        : allocation(std::move(a)), owners(std::move(o)), hold(std::move(h)), holder(std::move(by)) {}
    Given(const Given&) = delete;
    Given& operator=(const Given&) = delete;
    ~Given() {
        allocation.reset();
        owners.reset();
        rig::free(hold);
    }
};

// A Given and the machine whose claims decide when it goes: at once, or once the last
// device region over its runs is deregistered.
struct Held {
    std::shared_ptr<Given> given;
    pci::Machine machine;
    Held(std::shared_ptr<Given> g, pci::Machine m) : given(std::move(g)), machine(std::move(m)) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
        const auto spans = spans_of(given->allocation->reachable());
        machine.claims().keep(spans, std::move(given));
    }
    const std::shared_ptr<Allocation>& allocation() const { return given->allocation; }
    // What a peer maps: the owner's allocation, not another peer's mapping of it.
    const std::shared_ptr<Allocation>& source() const { return given->owners ? given->owners : given->allocation; }
    const Hold& hold() const { return given->hold; }
};

// Host memory of the driver, kept in the process's claims past its last handle while a
// region over its pages covers them.
void give_back(std::shared_ptr<const HostAllocation> allocation) {
    if (!allocation) return;
    const pci::Window& window = allocation->buffer.window;
    if (!window.is_mapped()) return;
    const pci::Span span{reinterpret_cast<std::uintptr_t>(window.data()), window.size()};
    pci::process_claims().keep({&span, 1}, std::const_pointer_cast<HostAllocation>(std::move(allocation)));
}

}  // namespace

struct HostMemory::State {
    std::shared_ptr<const Backend> backend;  // kept for its label while the handle lives
    mutable std::mutex mutex;
    std::shared_ptr<const HostAllocation> allocation;  // null once freed
    ~State() { give_back(std::move(allocation)); }
};

struct Gpu::State {
    std::shared_ptr<Backend> backend;
    std::shared_ptr<Space> space;
    Holder holder;
    // What close frees: every memory and host memory it gave that is still alive.
    std::mutex mutex;
    bool closed = false;
    std::vector<std::weak_ptr<Memory::State>> memories;
    std::vector<std::weak_ptr<HostMemory::State>> hosts;

    void check_open(const char* what) {
        std::lock_guard lock(mutex);
        if (closed) throw std::invalid_argument(std::string(what) + ": " + backend->label() + " is closed");
    }
    template <class T>
    void remember(std::vector<std::weak_ptr<T>>& list, const std::shared_ptr<T>& item) {
        std::lock_guard lock(mutex);
        std::erase_if(list, [](const std::weak_ptr<T>& w) { return w.expired(); });
        list.push_back(item);
    }
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
            throw std::invalid_argument(std::string(what) + ": the memory at " +
                                        text::hex(static_cast<std::uint64_t>(address)) + " of " + backend->label() +
                                        " was freed");
        return held_by;
    }
    void check_range(const char* what, std::uint64_t offset, std::uint64_t n) const {
        if (offset > bytes || n > bytes - offset)
            throw std::invalid_argument(std::string(what) + ": bytes [" + std::to_string(offset) + ", " +
                                        std::to_string(offset) + " + " + std::to_string(n) + ") do not lie in the " +
                                        text::bytes(bytes) + " at " + text::hex(static_cast<std::uint64_t>(address)) +
                                        " of " + backend->label());
    }
};

Result<std::byte*> Backend::process_bytes(const HostBuffer& host, std::uint64_t offset, std::uint64_t n) const {
    if (!host.window.is_mapped())
        return fail(label(), ": copies ", text::bytes(n),
                    " only to host memory the process maps; this HostBuffer's window is remote");
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
        throw std::invalid_argument(std::string(what) + ": 0 bytes of the memory at " +
                                    text::hex(static_cast<std::uint64_t>(memory.address)));
    memory.check_range(what, offset, n);
    const std::uint64_t first = offset / pci::page_bytes * pci::page_bytes;
    return {memory.use(what), first, round_up(offset + n, pci::page_bytes) - first, offset - first};
}

}  // namespace

Result<Runs> Memory::runs(std::uint64_t offset, std::uint64_t n) const {
    const Pages p = pages(*state_, "Memory::runs", offset, n);
    auto runs = p.held->allocation()->runs(p.first, p.bytes);
    if (!runs) return std::unexpected(std::move(runs).error());
    return Runs{std::move(*runs), p.offset};
}

Result<Dmabuf> Memory::dmabuf(std::uint64_t offset, std::uint64_t n) const {
    const Pages p = pages(*state_, "Memory::dmabuf", offset, n);
    auto buf = p.held->allocation()->dmabuf(p.first, p.bytes);
    if (!buf) return std::unexpected(std::move(buf).error());
    const std::uint64_t bytes = buf->bytes(), at = buf->offset() + p.offset;
    return Dmabuf(buf->release(), bytes, at);
}

Result<Pointer> Memory::pointer() const {
    const auto held = state_->use("Memory::pointer");
    auto p = held->allocation()->pointer();
    if (!p) return fail(state_->backend->label(), ": ", p.error());
    return p;
}

Result<Pointer> Allocation::pointer() const { return fail("its backend gives no process address for its memory"); }

// HostMemory

const HostBuffer& HostMemory::buffer() const {
    std::lock_guard lock(state_->mutex);
    if (!state_->allocation)
        throw std::invalid_argument("HostMemory::buffer: the host memory of " + state_->backend->label() +
                                    " was freed");
    return state_->allocation->buffer;
}

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
std::shared_ptr<Held> checked(const Memory::State& memory, const Backend& backend, const char* what,
                              std::uint64_t offset, std::uint64_t n) {
    if (memory.backend != &backend)
        throw std::invalid_argument(std::string(what) + ": the memory at " +
                                    text::hex(static_cast<std::uint64_t>(memory.address)) + " is " +
                                    memory.backend->label() + "'s, not " + backend.label() + "'s");
    memory.check_range(what, offset, n);
    return memory.use(what);
}

void check_host(const HostBuffer& host, std::uint64_t host_offset, std::uint64_t n, const char* what) {
    if (host_offset > host.size() || n > host.size() - host_offset)
        throw std::invalid_argument(std::string(what) + ": bytes [" + std::to_string(host_offset) + ", " +
                                    std::to_string(host_offset) + " + " + std::to_string(n) + ") do not lie in the " +
                                    text::bytes(host.size()) + " of host memory");
    if (host.runs.empty()) return;
    std::uint64_t covered = 0;
    for (const auto& run : host.runs) covered += run.bytes;
    if (covered < host.size())
        throw std::invalid_argument(std::string(what) + ": the host memory's runs cover " + text::bytes(covered) +
                                    " of its " + text::bytes(host.size()));
}

}  // namespace

Result<Memory> Gpu::alloc(std::uint64_t bytes) const {
    const Backend& backend = *state_->backend;
    state_->check_open("Gpu::alloc");
    if (bytes == 0) throw std::invalid_argument("Gpu::alloc: 0 bytes on " + backend.label());
    const std::uint64_t granularity = backend.granularity();
    if (bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - granularity)
        return fail(backend.label(), ": no Space range of ", text::bytes(bytes), " (larger than any address space)");
    const std::uint64_t held = round_up(bytes, granularity);
    auto hold = rig::alloc(*state_->space, state_->holder, static_cast<std::int64_t>(held),
                           static_cast<std::int64_t>(granularity));
    if (!hold)
        return fail(backend.label(), ": the Space [", text::hex(static_cast<std::uint64_t>(state_->space->base())),
                    " + ", text::bytes(static_cast<std::uint64_t>(state_->space->length())), ") has no free range for ",
                    text::bytes(bytes));
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
    memory->held_by = std::make_shared<Held>(
        std::make_shared<Given>(std::move(*allocation), nullptr, std::move(*hold), state_->holder),
        state_->backend->machine());
    state_->remember(state_->memories, memory);
    return Memory(std::move(memory));
}

Result<Memory> Gpu::map(const Memory& memory) const {
    const Backend& backend = *state_->backend;
    state_->check_open("Gpu::map");
    const Memory::State& peer = *memory.state_;
    if (peer.space != state_->space)
        throw std::invalid_argument("Gpu::map: the memory at " + text::hex(static_cast<std::uint64_t>(peer.address)) +
                                    " of " + peer.backend->label() + " lies in another Space than " + backend.label() +
                                    "'s");
    if (peer.owner == &backend)
        throw std::invalid_argument("Gpu::map: the memory at " + text::hex(static_cast<std::uint64_t>(peer.address)) +
                                    " is already " + backend.label() + "'s");
    const auto held = peer.use("Gpu::map");
    auto hold = rig::share(state_->holder, held->hold());
    if (!hold)
        throw std::invalid_argument("Gpu::map: the memory at " + text::hex(static_cast<std::uint64_t>(peer.address)) +
                                    " of " + peer.backend->label() + " was freed");
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
    mapped->held_by = std::make_shared<Held>(
        std::make_shared<Given>(std::move(*allocation), held->source(), std::move(*hold), state_->holder),
        state_->backend->machine());
    state_->remember(state_->memories, mapped);
    return Memory(std::move(mapped));
}

namespace {

// B18: the first claim over `memory`'s runs, as an Error, or Ok where none covers them.
Result<void> unclaimed(const Memory::State& memory, const Held& held) {
    for (const pci::Run& run : held.allocation()->reachable())
        if (auto c = held.machine.claims().claimed({run.address.value, run.bytes}))
            return fail(memory.backend->label(), ": cannot free the ", text::bytes(memory.bytes), " at ",
                        text::hex(static_cast<std::uint64_t>(memory.address)), ": ", c->by, " covers bus addresses [",
                        text::hex(c->span.first), ", ", text::hex(c->span.first + c->span.bytes),
                        ") of it, which the NIC may still write; deregister the region first");
    return {};
}

Result<void> unclaimed(const HostMemory::State& memory) {
    const pci::Window& window = memory.allocation->buffer.window;
    if (!window.is_mapped()) return {};
    const auto first = reinterpret_cast<std::uintptr_t>(window.data());
    if (auto c = pci::process_claims().claimed({first, window.size()}))
        return fail(memory.backend->label(), ": cannot free the host memory of ", text::bytes(window.size()), " at ",
                    text::hex(first), ": ", c->by, " covers process addresses [", text::hex(c->span.first), ", ",
                    text::hex(c->span.first + c->span.bytes),
                    ") of it, which the NIC may still write; deregister the region first");
    return {};
}

// Frees `state` (which must be unclaimed): the Held goes here unless a copy in flight
// still holds it.
void release(Memory::State& state) {
    std::shared_ptr<Held> held;
    std::lock_guard lock(state.mutex);
    held = std::move(state.held_by);
}

}  // namespace

Result<void> Gpu::free(const Memory& memory) const {
    Memory::State& state = *memory.state_;
    if (state.backend != state_->backend.get())
        throw std::invalid_argument("Gpu::free: the memory at " + text::hex(static_cast<std::uint64_t>(state.address)) +
                                    " is " + state.backend->label() + "'s, not " + state_->backend->label() + "'s");
    std::shared_ptr<Held> held;
    {
        std::lock_guard lock(state.mutex);
        if (!state.held_by) return {};
        if (auto r = unclaimed(state, *state.held_by); !r) return r;
        held = std::move(state.held_by);
    }
    return {};  // `held` goes here unless a copy in flight still holds it
}

Result<void> Gpu::free(const HostMemory& memory) const {
    HostMemory::State& state = *memory.state_;
    if (state.backend != state_->backend)
        throw std::invalid_argument("Gpu::free: the host memory is " + state.backend->label() + "'s, not " +
                                    state_->backend->label() + "'s");
    std::shared_ptr<const HostAllocation> allocation;
    {
        std::lock_guard lock(state.mutex);
        if (!state.allocation) return {};
        if (auto r = unclaimed(state); !r) return r;
        allocation = std::move(state.allocation);
    }
    give_back(std::move(allocation));
    return {};
}

Result<void> Gpu::close() const {
    std::vector<std::shared_ptr<Memory::State>> memories;
    std::vector<std::shared_ptr<HostMemory::State>> hosts;
    std::lock_guard lock(state_->mutex);
    if (state_->closed) return {};
    for (const auto& w : state_->memories)
        if (auto m = w.lock()) memories.push_back(std::move(m));
    for (const auto& w : state_->hosts)
        if (auto h = w.lock()) hosts.push_back(std::move(h));
    // Every claim is checked before anything is freed, so that a refused close frees nothing.
    for (const auto& m : memories) {
        std::lock_guard hold(m->mutex);
        if (!m->held_by) continue;
        if (auto r = unclaimed(*m, *m->held_by); !r) return r;
    }
    for (const auto& h : hosts) {
        std::lock_guard hold(h->mutex);
        if (!h->allocation) continue;
        if (auto r = unclaimed(*h); !r) return r;
    }
    state_->closed = true;
    for (const auto& m : memories) release(*m);
    for (const auto& h : hosts) {
        std::shared_ptr<const HostAllocation> allocation;
        {
            std::lock_guard hold(h->mutex);
            allocation = std::move(h->allocation);
        }
        give_back(std::move(allocation));
    }
    state_->memories.clear();
    state_->hosts.clear();
    return {};
}

Result<HostMemory> Gpu::host(std::uint64_t bytes) const {
    const Backend& backend = *state_->backend;
    state_->check_open("Gpu::host");
    if (bytes == 0) throw std::invalid_argument("Gpu::host: 0 bytes of host memory for " + backend.label());
    auto allocation = state_->backend->host(bytes);
    if (!allocation) return std::unexpected(std::move(allocation).error());
    // What a NIC pins must start on a page (Region::pages).
    const pci::Window& window = (*allocation)->buffer.window;
    if (const auto at = reinterpret_cast<std::uintptr_t>(window.data());
        window.is_mapped() && at % pci::page_bytes != 0)
        return fail(backend.label(), ": the driver gave host memory of ", text::bytes(bytes), " at ", text::hex(at),
                    ", which does not start on a page");
    auto memory = std::make_shared<HostMemory::State>();
    memory->backend = state_->backend;
    memory->allocation = std::move(*allocation);
    state_->remember(state_->hosts, memory);
    return HostMemory(std::move(memory));
}

Result<void> Gpu::upload(const Memory& memory, std::uint64_t offset, std::span<const std::byte> bytes) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::upload", offset, bytes.size());
    if (bytes.empty()) return {};
    return state_->backend->upload(*held->allocation(), offset, bytes);
}

Result<void> Gpu::download(const Memory& memory, std::uint64_t offset, std::span<std::byte> out) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::download", offset, out.size());
    if (out.empty()) return {};
    return state_->backend->download(*held->allocation(), offset, out);
}

Result<void> Gpu::copy_to_host(const Memory& memory, std::uint64_t offset, const HostBuffer& host,
                               std::uint64_t host_offset, std::uint64_t n) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::copy_to_host", offset, n);
    check_host(host, host_offset, n, "Gpu::copy_to_host");
    if (n == 0) return {};
    return state_->backend->copy_to_host(*held->allocation(), offset, host, host_offset, n);
}

Result<void> Gpu::copy_from_host(const HostBuffer& host, std::uint64_t host_offset, const Memory& memory,
                                 std::uint64_t offset, std::uint64_t n) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::copy_from_host", offset, n);
    check_host(host, host_offset, n, "Gpu::copy_from_host");
    if (n == 0) return {};
    return state_->backend->copy_from_host(host, host_offset, *held->allocation(), offset, n);
}

Result<void> Gpu::fill(const Memory& memory, std::uint64_t offset, std::uint64_t n, std::uint64_t seed) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::fill", offset, n);
    if (n == 0) return {};
    return state_->backend->fill(*held->allocation(), offset, n, seed);
}

Result<void> Gpu::fill(const Memory& memory, std::uint64_t seed) const { return fill(memory, 0, memory.bytes(), seed); }

Result<std::uint64_t> Gpu::checksum(const Memory& memory, std::uint64_t offset, std::uint64_t n) const {
    const auto held = checked(*memory.state_, *state_->backend, "Gpu::checksum", offset, n);
    if (n == 0) return std::uint64_t{0};  // pattern::finish(0, 0)
    return state_->backend->checksum(*held->allocation(), offset, n);
}

Result<std::uint64_t> Gpu::checksum(const Memory& memory) const { return checksum(memory, 0, memory.bytes()); }

}  // namespace rig::gpu

// A simulated machine's bus (state.hpp): where a model's DMA goes, what remote windows
// reach, and MSI-X delivery. The rule (system.hpp, and DESIGN.md "The simulator"):
//  1. A requester whose Bus Master Enable is off, or that stopped answering, issues
//     nothing: Unsupported Request.
//  2. An address inside a function's BAR goes to that BAR only where forwards(provider =
//     that function, client = the requester) holds on the machine's sysfs tree (Linux's
//     p2pdma rule, spec/p2pdma.md), else Completer Abort; the provider must decode memory
//     (Memory Space Enable) and answer, else Unsupported Request. A request that runs
//     past a BAR's end is a Completer Abort.
//  3. Any other address is system memory: through the requester's IOMMU domain where it
//     has one, else at physical addresses; a page nothing maps is Unsupported Request.
// A faulting request moves nothing: every page is translated before any byte moves.
// An aligned access of 1, 2, 4 or 8 bytes is one atomic access, acquire for reads and
// release for writes (device.hpp), so a model's last write of a ring entry's valid byte
// publishes the entry to a driver's acquire load; longer ones move bytes in address order.
#include <algorithm>
#include <array>
#include <cstring>

#include "rig/text.hpp"
#include "rig/wire.hpp"
#include "state.hpp"

namespace rig::sim {
namespace {

template <class T>
void store_release(std::byte* to, std::span<const std::byte> from) {
    T value;
    std::memcpy(&value, from.data(), sizeof value);
    std::atomic_ref<T>(*reinterpret_cast<T*>(to)).store(value, std::memory_order_release);
}

template <class T>
void load_acquire(std::span<std::byte> to, std::byte* from) {
    const T value = std::atomic_ref<T>(*reinterpret_cast<T*>(from)).load(std::memory_order_acquire);
    std::memcpy(to.data(), &value, sizeof value);
}

bool is_atomic(std::uintptr_t at, std::size_t bytes) {
    return (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8) && at % bytes == 0;
}

// Moves `in` to process memory at `to`, one atomic store where the access is aligned and
// of 1, 2, 4 or 8 bytes.
void move_to(std::byte* to, std::span<const std::byte> in) {
    if (!is_atomic(reinterpret_cast<std::uintptr_t>(to), in.size())) {
        std::memcpy(to, in.data(), in.size());
        return;
    }
    switch (in.size()) {
        case 1: return store_release<std::uint8_t>(to, in);
        case 2: return store_release<std::uint16_t>(to, in);
        case 4: return store_release<std::uint32_t>(to, in);
        default: return store_release<std::uint64_t>(to, in);
    }
}

void move_from(std::span<std::byte> out, std::byte* from) {
    if (!is_atomic(reinterpret_cast<std::uintptr_t>(from), out.size())) {
        std::memcpy(out.data(), from, out.size());
        return;
    }
    switch (out.size()) {
        case 1: return load_acquire<std::uint8_t>(out, from);
        case 2: return load_acquire<std::uint16_t>(out, from);
        case 4: return load_acquire<std::uint32_t>(out, from);
        default: return load_acquire<std::uint64_t>(out, from);
    }
}

// The widest access of 8, 4, 2 or 1 bytes that is aligned at `offset` and fits `left`.
unsigned width_at(std::uint64_t offset, std::size_t left) {
    for (unsigned w : {8u, 4u, 2u}) if (offset % w == 0 && left >= w) return w;
    return 1;
}

// A register BAR's bytes, as accesses of the widest aligned widths.
void registers_write(Slot& slot, unsigned bar, std::uint64_t offset, std::span<const std::byte> in) {
    while (!in.empty()) {
        const unsigned w = width_at(offset, in.size());
        std::uint64_t value = 0;
        std::memcpy(&value, in.data(), w);  // little-endian, as the bus
        slot.model->write(bar, offset, w, value);
        offset += w;
        in = in.subspan(w);
    }
}

void registers_read(Slot& slot, unsigned bar, std::uint64_t offset, std::span<std::byte> out) {
    while (!out.empty()) {
        const unsigned w = width_at(offset, out.size());
        const std::uint64_t value = slot.model->read(bar, offset, w);
        std::memcpy(out.data(), &value, w);
        offset += w;
        out = out.subspan(w);
    }
}

constexpr std::uint64_t all_ones(unsigned width) { return width >= 8 ? ~0ull : (1ull << (8 * width)) - 1; }

// Remote windows of a simulated machine: register BARs, each access a model call.
class BarTransport final : public pci::Transport {
public:
    explicit BarTransport(std::shared_ptr<System::State> state) : state_(std::move(state)) {}

    std::uint64_t read(std::uint64_t address, unsigned width) override {
        auto at = reach(Operation::Read, address, width);
        return at ? at->slot->model->read(at->bar, at->offset, width) : all_ones(width);
    }
    void write(std::uint64_t address, unsigned width, std::uint64_t value) override {
        if (auto at = reach(Operation::Write, address, width)) at->slot->model->write(at->bar, at->offset, width, value);
    }
    void read(std::uint64_t address, std::span<std::byte> out) override {
        if (auto at = reach(Operation::Read, address, out.size())) registers_read(*at->slot, at->bar, at->offset, out);
        else std::fill(out.begin(), out.end(), std::byte{0xff});
    }
    void write(std::uint64_t address, std::span<const std::byte> in) override {
        if (auto at = reach(Operation::Write, address, in.size())) registers_write(*at->slot, at->bar, at->offset, in);
    }
    std::optional<std::string> failed() const override { return state_->failed(); }

private:
    // The register BAR that answers, or nullopt where the access reads all ones: the
    // transport failed, the function was given back, stopped answering or decodes no memory.
    std::optional<System::State::Decoded> reach(Operation operation, std::uint64_t address, std::uint64_t bytes) {
        if (!state_->call(operation, {})) return std::nullopt;
        bool partial = false;
        auto at = state_->decode(address, bytes, partial);
        if (!at || !at->slot->taken || at->slot->stopped || !at->slot->memory_space) return std::nullopt;
        return at;
    }

    std::shared_ptr<System::State> state_;
};

}  // namespace

std::shared_ptr<pci::Transport> make_transport(std::shared_ptr<System::State> state) {
    return std::make_shared<BarTransport>(std::move(state));
}

DmaStatus SlotPort::read(pci::DmaAddress address, std::span<std::byte> out) {
    return slot_.state.dma(slot_, address, out, {}, false);
}

DmaStatus SlotPort::write(pci::DmaAddress address, std::span<const std::byte> in) {
    return slot_.state.dma(slot_, address, {}, in, true);
}

void SlotPort::interrupt(unsigned vector) { slot_.state.raise(slot_, vector); }

const std::string& SlotPort::bus() const { return slot_.bus; }

std::optional<System::State::Decoded> System::State::decode(std::uint64_t address, std::uint64_t bytes, bool& partial) {
    partial = false;
    if (address < aperture_start || address >= aperture_end) return std::nullopt;  // system memory
    for (const BarRange& r : bar_ranges) {
        if (address < r.start || address - r.start >= r.bytes) continue;
        const std::uint64_t offset = address - r.start;
        if (bytes > r.bytes - offset) {
            partial = true;
            return std::nullopt;
        }
        return Decoded{r.slot, r.bar, offset};
    }
    return std::nullopt;
}

bool System::State::forwards(const Slot& provider, const Slot& client) {
    // Answered once per pair from the sysfs tree, then read without a lock on every DMA.
    std::atomic<std::uint8_t>& known = forwards_known[provider.index * slots.size() + client.index];
    if (const auto k = known.load(std::memory_order_acquire); k != forwards_unknown) return k == forwards_yes;
    std::lock_guard lock(route_mutex);  // routes is not thread-safe
    const bool yes = routes.forwards(provider.bus, client.bus);
    known.store(yes ? forwards_yes : forwards_no, std::memory_order_release);
    return yes;
}

void System::State::count_fault(Fault fault) {
    ++fault_count;
    std::lock_guard lock(fault_mutex);
    recent.push_back(std::move(fault));
    while (recent.size() > 64) recent.pop_front();
}

DmaStatus System::State::dma(Slot& requester, pci::DmaAddress address, std::span<std::byte> out,
                             std::span<const std::byte> in, bool is_write) {
    const std::uint64_t bytes = is_write ? in.size() : out.size();
    const auto fault = [&](DmaStatus status, std::string why) {
        count_fault({requester.bus, address, bytes, is_write, status, std::move(why)});
        return status;
    };
    if (requester.stopped) return fault(DmaStatus::UnsupportedRequest, requester.bus + " stopped answering");
    if (!requester.bus_master)
        return fault(DmaStatus::UnsupportedRequest, requester.bus + " has Bus Master Enable off");
    if (bytes == 0) return DmaStatus::Ok;
    if (address.value + bytes < address.value)
        return fault(DmaStatus::UnsupportedRequest, "the request wraps around the address space");

    bool partial = false;
    if (auto target = decode(address.value, bytes, partial)) {
        Slot& provider = *target->slot;
        const auto bar = [&] { return provider.bus + " BAR" + std::to_string(target->bar); };
        if (!forwards(provider, requester))
            return fault(DmaStatus::CompleterAbort,
                         "the bus does not carry " + requester.bus + "'s requests to " + bar() + ": " +
                             routes.route(provider.bus, requester.bus).explain());
        if (provider.stopped || !provider.memory_space)
            return fault(DmaStatus::UnsupportedRequest, bar() + " does not decode memory (Memory Space Enable off, or "
                                                                "the function stopped answering)");
        if (auto memory = provider.memory[target->bar]; !memory.empty()) {
            std::byte* at = memory.data() + target->offset;
            if (is_write) move_to(at, in);
            else move_from(out, at);
        } else if (is_write) {
            registers_write(provider, target->bar, target->offset, in);
        } else {
            registers_read(provider, target->bar, target->offset, out);
        }
        return DmaStatus::Ok;
    }
    if (partial)
        return fault(DmaStatus::CompleterAbort, "the request at " + text::hex(address.value) + " of " +
                                                    text::bytes(bytes) + " runs past the end of a BAR");

    // System memory: translate every page, then move (a request of up to `on_stack`
    // pages, as every packet and ring entry is, keeps its translations on the stack).
    std::shared_lock lock(memory_mutex);
    struct Piece {
        std::byte* host;
        std::uint64_t bytes;
    };
    constexpr std::size_t on_stack = 8;
    std::array<Piece, on_stack> few;
    std::vector<Piece> many;
    std::size_t count = 0;
    for (std::uint64_t done = 0; done < bytes;) {
        const std::uint64_t at = address.value + done;
        const std::uint64_t n = std::min(bytes - done, page - at % page);
        std::string why;
        auto host = translate(requester, at, why);
        if (!host) return fault(DmaStatus::UnsupportedRequest, why);
        if (count == on_stack) many.assign(few.begin(), few.end());
        if (count < on_stack) few[count] = {*host, n};
        else many.push_back({*host, n});
        ++count;
        done += n;
    }
    const std::span<const Piece> pieces = count <= on_stack ? std::span<const Piece>(few.data(), count) : many;
    std::uint64_t done = 0;
    for (const Piece& p : pieces) {
        if (is_write) move_to(p.host, in.subspan(done, p.bytes));
        else move_from(out.subspan(done, p.bytes), p.host);
        done += p.bytes;
    }
    return DmaStatus::Ok;
}

void System::State::raise(Slot& slot, unsigned vector) {
    if (slot.stopped || !slot.msix_live) return;  // MSI-X off or masked: dropped
    std::lock_guard lock(slot.irq_mutex);
    if (vector >= slot.pending.size()) return;
    ++slot.pending[vector];
    slot.irq.notify_all();
}

bool System::State::wait(Slot& slot, unsigned vector, std::chrono::nanoseconds timeout) {
    std::unique_lock lock(slot.irq_mutex);
    if (vector >= slot.pending.size()) return false;
    if (!slot.irq.wait_for(lock, timeout, [&] { return slot.pending[vector] > 0; })) return false;
    slot.pending[vector] = 0;  // like an eventfd read: what arrived is consumed at once
    return true;
}

}  // namespace rig::sim

// A simulated machine's bus (state.hpp): where a model's DMA goes, what remote windows
// reach, and MSI-X delivery. A request is routed as PCI Express hardware routes it
// (PCIe 6.0 §6.12 for ACS), so that the model is never easier than the machine:
//  1. A requester whose Bus Master Enable is off, or that stopped answering, issues
//     nothing: Unsupported Request.
//  2. The request walks up from its requester. Where a function's BAR decodes its address
//     and that function is below a node of the requester's way (the common node), the
//     node takes it down to the BAR untranslated, unless a node of either leg, the
//     common one included, has ACS P2P Request Redirect, Completion Redirect or Egress
//     Control on (ctrl & 0x2c): then it goes on up. (The hardware applies Request
//     Redirect where a request enters a port and Completion Redirect to the completions;
//     counting every bit on every node, as Linux's p2pdma does, keeps the model from
//     carrying what Linux would not program as PCI_P2PDMA_MAP_BUS_ADDR.) A request taken
//     down that runs past the BAR's end is a Completer Abort; a BAR that does not decode
//     memory (Memory Space Enable off) answers Unsupported Request.
//  3. Anything else reaches the root complex. The requester's IOMMU domain translates
//     each page (without an IOMMU the address is physical); a page it maps nothing at is
//     Unsupported Request, as the IOMMU's fault is. The translated address is system
//     memory, or another function's BAR, which the root complex carries the request to
//     only where its rule allows (Machine::host_bridge_route: the AMD Zen CPU rule, the
//     host-bridge allow-list), else Completer Abort. Nothing there: Unsupported Request.
// A faulting request moves nothing: every page is translated before any byte moves.
// An aligned access of 1, 2, 4 or 8 bytes is one atomic access, acquire for reads and
// release for writes (device.hpp), so a model's last write of a ring entry's valid byte
// publishes the entry to a driver's acquire load; longer ones move bytes in address order,
// except that pages the IOMMU translates to a register BAR move after the others (the
// register calls need the memory lock let go).
#include <algorithm>
#include <array>
#include <cstring>

#include "rig/pci/config.hpp"
#include "rig/text.hpp"
#include "rig/little_endian.hpp"
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
    for (unsigned w : {8u, 4u, 2u})
        if (offset % w == 0 && left >= w) return w;
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
        if (auto at = reach(Operation::Write, address, width))
            at->slot->model->write(at->bar, at->offset, width, value);
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
        if (!at || partial || !at->slot->taken || at->slot->stopped || !at->slot->memory_space) return std::nullopt;
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
        partial = bytes > r.bytes - offset;
        return Decoded{r.slot, r.bar, offset};
    }
    return std::nullopt;
}

bool System::State::direct(const Slot& provider, const Slot& client) const {
    const auto redirects = [&](std::size_t node) {
        const auto& acs = topology.functions()[node].spec.acs_control;
        return acs && (*acs & pci::config::acs_redirect) != 0;
    };
    for (std::size_t i = 0; i < provider.way.size(); ++i) {
        const auto at = std::find(client.way.begin(), client.way.end(), provider.way[i]);
        if (at == client.way.end()) continue;
        // The common node: the provider's leg up to and including it, the client's below it.
        for (std::size_t k = 0; k <= i; ++k)
            if (redirects(provider.way[k])) return false;
        for (auto it = client.way.begin(); it != at; ++it)
            if (redirects(*it)) return false;
        return true;
    }
    return false;  // no common node below the root complex
}

bool System::State::host_bridge_allows(const Slot& provider, const Slot& client) {
    // Answered once per pair from the sysfs tree, then read without a lock on every DMA.
    std::atomic<std::uint8_t>& known = host_bridge_known[provider.index * slots.size() + client.index];
    if (const auto k = known.load(std::memory_order_acquire); k != rule_unknown) return k == rule_yes;
    std::lock_guard lock(route_mutex);  // routes is not thread-safe
    const bool yes = routes.host_bridge_route(provider.bus, client.bus).forwards();
    known.store(yes ? rule_yes : rule_no, std::memory_order_release);
    return yes;
}

void System::State::count_fault(Fault fault) {
    ++fault_count;
    std::lock_guard lock(fault_mutex);
    recent.push_back(std::move(fault));
    while (recent.size() > 64) recent.pop_front();
}

namespace {

// Where one piece of a request goes: process memory (system memory, or a memory BAR), or
// a register BAR's model.
struct Piece {
    std::byte* host = nullptr;
    Slot* slot = nullptr;
    unsigned bar = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

void move(const Piece& p, std::span<std::byte> out, std::span<const std::byte> in, std::uint64_t done, bool is_write) {
    if (p.host != nullptr) {
        if (is_write) move_to(p.host, in.subspan(done, p.bytes));
        else move_from(out.subspan(done, p.bytes), p.host);
    } else if (is_write) {
        registers_write(*p.slot, p.bar, p.offset, in.subspan(done, p.bytes));
    } else {
        registers_read(*p.slot, p.bar, p.offset, out.subspan(done, p.bytes));
    }
}

std::string bar_name(const Slot& slot, unsigned bar) { return slot.bus + " BAR" + std::to_string(bar); }

}  // namespace

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

    // 2. Below the root complex: a BAR on a common node's side takes it untranslated.
    bool partial = false;
    const auto target = decode(address.value, bytes, partial);
    if (target && direct(*target->slot, requester)) {
        Slot& provider = *target->slot;
        if (partial)
            return fault(DmaStatus::CompleterAbort, "the request at " + text::hex(address.value) + " of " +
                                                        text::bytes(bytes) + " runs past the end of " +
                                                        bar_name(provider, target->bar));
        if (provider.stopped || !provider.memory_space)
            return fault(DmaStatus::UnsupportedRequest, bar_name(provider, target->bar) +
                                                            " does not decode memory (Memory Space Enable off, or "
                                                            "the function stopped answering)");
        Piece piece{nullptr, &provider, target->bar, target->offset, bytes};
        if (auto memory = provider.memory[target->bar]; !memory.empty()) piece.host = memory.data() + target->offset;
        move(piece, out, in, 0, is_write);
        return DmaStatus::Ok;
    }

    // 3. The root complex: translate every page, decode it, then move (a request of up to
    // `on_stack` pages, as every packet and ring entry is, keeps its pieces on the stack).
    // Untranslated, a request is one range of the bus as below; translated, each page is
    // the IOMMU's own.
    if (target && partial && !requester.iommu && host_bridge_allows(*target->slot, requester))
        return fault(DmaStatus::CompleterAbort, "the request at " + text::hex(address.value) + " of " +
                                                    text::bytes(bytes) + " runs past the end of " +
                                                    bar_name(*target->slot, target->bar));
    std::shared_lock lock(memory_mutex);
    constexpr std::size_t on_stack = 8;
    std::array<Piece, on_stack> few;
    std::vector<Piece> many;
    std::size_t count = 0;
    bool registers = false;
    for (std::uint64_t done = 0; done < bytes;) {
        const std::uint64_t at = address.value + done;
        const std::uint64_t n = std::min(bytes - done, page - at % page);
        std::string why;
        const auto physical = translate(requester, at, why);
        if (!physical) return fault(DmaStatus::UnsupportedRequest, why);
        Piece piece{nullptr, nullptr, 0, 0, n};
        bool past = false;
        if (auto bar = decode(*physical, n, past)) {
            Slot& provider = *bar->slot;
            if (!host_bridge_allows(provider, requester))
                return fault(DmaStatus::CompleterAbort,
                             "the root complex does not carry " + requester.bus + "'s requests to " +
                                 bar_name(provider, bar->bar) + ": " +
                                 routes.host_bridge_route(provider.bus, requester.bus).explain());
            if (past)
                return fault(DmaStatus::CompleterAbort, "the request at " + text::hex(*physical) + " of " +
                                                            text::bytes(n) + " runs past the end of " +
                                                            bar_name(provider, bar->bar));
            if (provider.stopped || !provider.memory_space)
                return fault(DmaStatus::UnsupportedRequest, bar_name(provider, bar->bar) +
                                                                " does not decode memory (Memory Space Enable off, "
                                                                "or the function stopped answering)");
            piece = {nullptr, &provider, bar->bar, bar->offset, n};
            if (auto memory = provider.memory[bar->bar]; !memory.empty()) piece.host = memory.data() + bar->offset;
            else registers = true;
        } else {
            piece.host = memory_at(*physical);
            if (piece.host == nullptr)
                return fault(DmaStatus::UnsupportedRequest, "no memory at physical address " + text::hex(*physical));
        }
        if (count == on_stack) many.assign(few.begin(), few.end());
        if (count < on_stack) few[count] = piece;
        else many.push_back(piece);
        ++count;
        done += n;
    }
    const std::span<const Piece> pieces = count <= on_stack ? std::span<const Piece>(few.data(), count) : many;
    std::uint64_t done = 0;
    for (const Piece& p : pieces) {
        if (p.host != nullptr) move(p, out, in, done, is_write);
        done += p.bytes;
    }
    if (!registers) return DmaStatus::Ok;
    lock.unlock();  // a model's register access may issue DMA of its own
    done = 0;
    for (const Piece& p : pieces) {
        if (p.host == nullptr) move(p, out, in, done, is_write);
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

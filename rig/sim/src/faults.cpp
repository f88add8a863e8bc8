// Call records and fault injection of a simulated machine (rig/sim/faults.hpp).
//
// Every operation of the machine's Ops, FunctionOps and remote windows calls
// State::call first. Without a Faults on the machine that is two atomic increments and
// nothing grows: a long-lived machine keeps no record of its calls. Once a Faults is made
// the calls are listed too (accesses only counted); with injection armed they are checked
// against fail_at / fail_after under Injection::mutex. Once failed, the machine stays
// failed and State::call answers false.
#include "rig/sim/faults.hpp"

#include <array>

#include "rig/text.hpp"
#include "state.hpp"

namespace rig::sim {
namespace {

constexpr std::array<std::string_view, 20> names{"functions", "take",      "reserve",  "config",    "set_config",
                                                 "bar",       "map",       "unmap",    "interrupt", "reset",
                                                 "forget",    "alloc_dma", "free_dma", "pin",       "unpin",
                                                 "release",   "read",      "write",    "map_peer",  "unmap_peer"};

bool is_access(Operation op) { return op == Operation::Read || op == Operation::Write; }

}  // namespace

std::string_view to_string(Operation operation) { return names.at(static_cast<std::size_t>(operation)); }

bool System::State::call(Operation operation, const std::string& bus) {
    Injection& in = injection;
    ++in.total;
    ++in.counts[static_cast<std::size_t>(operation)];
    if (!is_access(operation) && in.recording.load(std::memory_order_acquire)) {
        std::lock_guard lock(in.mutex);
        in.calls.push_back({operation, bus});
    }
    if (!in.armed.load(std::memory_order_acquire)) return true;
    std::lock_guard lock(in.mutex);
    if (in.failed) return false;
    const auto fail_now = [&](std::string why) {
        in.why = name + ": " + why;
        in.failed = true;
        return false;
    };
    if (in.fail_at && in.fail_at->operation == operation && (!in.fail_at->bus || *in.fail_at->bus == bus)) {
        std::string why = std::move(in.fail_at->why);
        in.fail_at.reset();
        return fail_now(std::move(why));
    }
    if (in.fail_after) {
        if (*in.fail_after == 0) return fail_now(in.fail_after_why);
        --*in.fail_after;
    }
    return true;
}

void System::State::step(Operation operation, std::size_t step) {
    Injection& in = injection;
    if (!in.armed.load(std::memory_order_acquire)) return;
    std::lock_guard lock(in.mutex);
    if (!in.throw_in || in.throw_in->first != operation || in.throw_in->second != step) return;
    in.throw_in.reset();
    throw InjectedFault(name + ": injected fault in " + std::string(to_string(operation)) + " at step " +
                        std::to_string(step));
}

std::optional<std::string> System::State::failed() const {
    if (!injection.failed) return std::nullopt;
    std::lock_guard lock(injection.mutex);
    return injection.why;
}

Faults::Faults(const System& system) : state_(system.state_) { state_->injection.recording = true; }

std::vector<Call> Faults::calls() const {
    std::lock_guard lock(state_->injection.mutex);
    return state_->injection.calls;
}

std::size_t Faults::count() const { return state_->injection.total; }

std::size_t Faults::count(Operation operation) const {
    return state_->injection.counts[static_cast<std::size_t>(operation)];
}

void Faults::fail_at(Operation operation, std::string why, std::optional<std::string> bus) {
    std::lock_guard lock(state_->injection.mutex);
    state_->injection.fail_at = Injection::FailAt{operation, std::move(bus), std::move(why)};
    state_->injection.armed = true;
}

void Faults::fail_after(std::size_t calls, std::string why) {
    std::lock_guard lock(state_->injection.mutex);
    state_->injection.fail_after = calls;
    state_->injection.fail_after_why = std::move(why);
    state_->injection.armed = true;
}

void Faults::fail(std::string why) {
    std::lock_guard lock(state_->injection.mutex);
    if (state_->injection.failed) return;
    state_->injection.why = state_->name + ": " + why;
    state_->injection.failed = true;
    state_->injection.armed = true;
}

void Faults::throw_in(Operation operation, std::size_t step) {
    std::lock_guard lock(state_->injection.mutex);
    state_->injection.throw_in = std::pair(operation, step);
    state_->injection.armed = true;
}

void Faults::unmapped_dma() { state_->injection.unmapped_dma = true; }

void Faults::stop(std::string_view bus) { state_->slot(bus).stopped = true; }

void Faults::refuse_bus_master_off(std::string_view bus) { state_->slot(bus).refuse_bus_master_off = true; }

void Faults::alias_iova(std::string_view bus, pci::DmaAddress iova, pci::DmaAddress as, std::uint64_t bytes) {
    Slot& s = state_->slot(bus);
    const std::uint64_t page = state_->page;
    if (!s.iommu) throw std::invalid_argument("Faults::alias_iova: " + std::string(bus) + " has no IOMMU");
    if (iova.value % page || as.value % page || bytes % page)
        throw std::invalid_argument("Faults::alias_iova: the addresses and size are not whole pages");
    std::unique_lock lock(state_->memory_mutex);
    for (std::uint64_t done = 0; done < bytes; done += page) {
        auto it = s.domain.pages.find((as.value + done) / page);
        if (it == s.domain.pages.end())
            throw std::invalid_argument("Faults::alias_iova: nothing is mapped at IOVA " + text::hex(as.value + done));
        s.domain.pages[(iova.value + done) / page] = it->second;
    }
}

std::size_t Faults::double_give_backs() const { return state_->injection.double_give_backs; }

Faults::GiveBacks Faults::give_backs(std::string_view bus) const {
    Slot& s = state_->slot(bus);
    std::lock_guard hold(s.holdings_mutex);
    return {s.given_back.windows, s.given_back.pins, s.given_back.dma_allocations};
}

}  // namespace rig::sim

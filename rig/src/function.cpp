// Function (rig/pci/function.hpp): a taken PCI function, over the operations its machine
// gives (transport.hpp; docs/api.md, "Transports").
//
// The rules this file keeps, in the page's words and order:
//  - Misuse is refused before any operation runs: every bound, size, alignment and
//    ownership check below comes before the first call into FunctionOps. BARs are read
//    once, at the take, so checking a window's range calls nothing.
//  - Each function's windows, DMA allocations and pins (peer mappings among them) are
//    counted here, and every pin, unpin, map_peer and unmap_peer is passed on, so the
//    transport counts them too.
//  - A use (any member but the plain accessors) runs between Use's constructor and
//    destructor. Once release began no use starts (std::invalid_argument "… was
//    released"); release waits for the uses running to finish, then alone runs the
//    give-back: Command's Bus Master Enable off (config, set_config), then
//    FunctionOps::release, which gives back everything the take holds.
//  - Function calls no unmap, free_dma, unpin or unmap_peer once release began: the
//    give-back is FunctionOps::release's. A record is dropped before its give-back is
//    called, so an exception that cuts one leaves the rest to release, never twice.
//  - An exception that ends release part-way leaves the function releasing; release
//    called again runs the give-back again, and the transport gives back what is left.
#include "rig/pci/function.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "rig/pci/address.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/reservation.hpp"
#include "rig/pci/transport.hpp"
#include "rig/text.hpp"
#include "capability_walk.hpp"

namespace rig::pci {

namespace cfg = config;

struct Function::State {
    Machine machine;
    std::string bus;
    std::unique_ptr<FunctionOps> ops;
    Addressing addressing = Addressing::Iommu;
    bool inherited = false;
    std::uint64_t page = page_bytes;
    std::array<std::optional<Bar>, 6> bars{};

    // The use/release protocol: guarded by `mutex`.
    enum class Phase { Live, Releasing, Released };
    std::mutex mutex;
    std::condition_variable idle;  // uses fell to 0, or a give-back ended
    unsigned uses = 0;
    Phase phase = Phase::Live;
    bool giving_back = false;
    bool release_answer = true;

    // Read-modify-write sequences on configuration registers, one at a time.
    std::mutex config_writes;

    // What the function holds, guarded by `records`, which is held across the operation
    // that changes a record (so an operation and its record are one step to other threads).
    struct Pin {
        std::uintptr_t address;
        std::uint64_t bytes;
    };
    std::mutex records;
    std::vector<Window> windows;
    std::vector<Dma> dmas;
    std::vector<Pin> pins;
    std::vector<Run> peers;  // map_peer's runs, counted with the pins
    std::atomic<unsigned> dma_bits{64};

    State(Machine m, std::string b, std::unique_ptr<FunctionOps> o)
        : machine(std::move(m)), bus(std::move(b)), ops(std::move(o)) {}
    ~State();

    bool release();
    bool give_back();
    [[noreturn]] void refuse(const std::string& what) const { throw std::invalid_argument(bus + ": " + what); }
};

namespace {

using State = Function::State;

// One use of a live function: refused once release began; release waits for it.
class Use {
public:
    explicit Use(State& state) : state_(state) {
        std::lock_guard lock(state.mutex);
        if (state.phase != State::Phase::Live) throw std::invalid_argument(state.bus + " was released");
        ++state.uses;
    }
    ~Use() {
        std::lock_guard lock(state_.mutex);
        if (--state_.uses == 0) state_.idle.notify_all();
    }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

private:
    State& state_;
};

void check_config(const State& s, std::uint32_t offset, unsigned bytes) {
    if (offset >= cfg::express_bytes || offset + bytes > cfg::express_bytes)
        s.refuse("configuration offset " + text::hex(offset) + " is outside the 4096 bytes of configuration space");
    if (offset % bytes != 0)
        s.refuse("configuration access of " + std::to_string(bytes) + " bytes at " + text::hex(offset) +
                 " is not aligned to its width");
}

void check_bar_index(const State& s, unsigned index) {
    if (index > 5) s.refuse("BAR index " + std::to_string(index) + " is not 0..5");
}

std::uint64_t below(unsigned bits) {
    return bits >= 64 ? std::numeric_limits<std::uint64_t>::max() : std::uint64_t{1} << bits;
}

std::optional<std::uint32_t> capability_of(State& s, std::uint8_t id) {
    return find_capability([&](std::uint32_t offset, unsigned bytes) { return s.ops->config(offset, bytes); }, id);
}

// Sets or clears `bits` of the 16-bit register at `offset`.
void update16(State& s, std::uint32_t offset, std::uint16_t bits, bool on) {
    std::lock_guard lock(s.config_writes);
    const auto old = static_cast<std::uint16_t>(s.ops->config(offset, 2));
    const auto value = static_cast<std::uint16_t>(on ? old | bits : old & ~bits);
    if (value != old) s.ops->set_config(offset, 2, value);
}

Result<std::uint32_t> device_control(State& s) {
    auto express = capability_of(s, cfg::capability_pci_express);
    if (!express) return fail(s.bus, ": has no PCI Express capability");
    return *express + cfg::express_device_control;
}

Result<void> set_device_control(State& s, std::uint16_t bit, bool on) {
    auto at = device_control(s);
    if (!at) return std::unexpected(std::move(at).error());
    update16(s, *at, bit, on);
    return {};
}

Result<bool> get_device_control(State& s, std::uint16_t bit) {
    auto at = device_control(s);
    if (!at) return std::unexpected(std::move(at).error());
    return (s.ops->config(*at, 2) & bit) != 0;
}

}  // namespace

// The give-back, run by one thread once no use runs: bus mastering off, then the
// transport's release of everything the take holds.
bool State::give_back() {
    const auto command = static_cast<std::uint16_t>(ops->config(cfg::command, 2));
    // All ones: the function no longer answers (fell off the bus); nothing to clear.
    if (command != 0xffff && (command & cfg::command_bus_master))
        ops->set_config(cfg::command, 2, command & ~cfg::command_bus_master);
    return ops->release();
}

bool State::release() {
    std::unique_lock lock(mutex);
    if (phase == Phase::Released) return release_answer;
    phase = Phase::Releasing;  // from here no use starts
    idle.wait(lock, [&] { return uses == 0 && !giving_back; });
    if (phase == Phase::Released) return release_answer;  // another thread finished it
    giving_back = true;
    lock.unlock();
    bool answer = false;
    try {
        answer = give_back();
    } catch (...) {
        lock.lock();
        giving_back = false;  // still Releasing: a later release runs the give-back again
        idle.notify_all();
        throw;
    }
    {
        std::lock_guard hold(records);
        windows.clear();
        dmas.clear();
        pins.clear();
        peers.clear();
    }
    lock.lock();
    giving_back = false;
    phase = Phase::Released;
    release_answer = answer;
    idle.notify_all();
    return answer;
}

State::~State() {
    // The last handle went without a release: give back now. Nothing can report here.
    for (int attempt = 0; attempt < 3; ++attempt) {
        try {
            release();
            return;
        } catch (...) {}
    }
}

Result<Function> Function::take(const Machine& machine, std::string_view bus) {
    if (!is_address(bus))
        throw std::invalid_argument("Function::take: \"" + std::string(bus) + "\" is not a bus address");
    const auto& ops = machine.ops();
    if (!ops) return fail(bus, ": the machine is a sysfs tree (Machine::at) and its functions cannot be taken");
    auto taken = ops->take(bus);
    if (!taken) return std::unexpected(std::move(taken).error());
    auto state = std::make_shared<State>(machine, std::string(bus), std::move(*taken));
    state->addressing = state->ops->addressing();
    state->inherited = state->ops->inherited();
    state->page = machine.page();
    for (unsigned i = 0; i < state->bars.size(); ++i) state->bars[i] = state->ops->bar(i);
    return Function(std::move(state));
}

const std::string& Function::bus() const { return state_->bus; }
const Machine& Function::machine() const { return state_->machine; }
Addressing Function::addressing() const { return state_->addressing; }
bool Function::inherited() const { return state_->inherited; }

std::uint8_t Function::config8(std::uint32_t offset) const {
    check_config(*state_, offset, 1);
    Use use(*state_);
    return static_cast<std::uint8_t>(state_->ops->config(offset, 1));
}

std::uint16_t Function::config16(std::uint32_t offset) const {
    check_config(*state_, offset, 2);
    Use use(*state_);
    return static_cast<std::uint16_t>(state_->ops->config(offset, 2));
}

std::uint32_t Function::config32(std::uint32_t offset) const {
    check_config(*state_, offset, 4);
    Use use(*state_);
    return state_->ops->config(offset, 4);
}

void Function::set_config8(std::uint32_t offset, std::uint8_t value) const {
    check_config(*state_, offset, 1);
    Use use(*state_);
    state_->ops->set_config(offset, 1, value);
}

void Function::set_config16(std::uint32_t offset, std::uint16_t value) const {
    check_config(*state_, offset, 2);
    Use use(*state_);
    state_->ops->set_config(offset, 2, value);
}

void Function::set_config32(std::uint32_t offset, std::uint32_t value) const {
    check_config(*state_, offset, 4);
    Use use(*state_);
    state_->ops->set_config(offset, 4, value);
}

std::optional<std::uint32_t> Function::capability(std::uint8_t id) const {
    Use use(*state_);
    return capability_of(*state_, id);
}

void Function::set_bus_master(bool on) const {
    Use use(*state_);
    update16(*state_, cfg::command, cfg::command_bus_master, on);
}

bool Function::bus_master() const {
    Use use(*state_);
    return (state_->ops->config(cfg::command, 2) & cfg::command_bus_master) != 0;
}

void Function::set_memory_space(bool on) const {
    Use use(*state_);
    update16(*state_, cfg::command, cfg::command_memory_space, on);
}

Result<void> Function::set_relaxed_ordering(bool on) const {
    Use use(*state_);
    return set_device_control(*state_, cfg::device_control_relaxed_ordering, on);
}

Result<bool> Function::relaxed_ordering() const {
    Use use(*state_);
    return get_device_control(*state_, cfg::device_control_relaxed_ordering);
}

Result<void> Function::set_no_snoop(bool on) const {
    Use use(*state_);
    return set_device_control(*state_, cfg::device_control_no_snoop, on);
}

Result<bool> Function::no_snoop() const {
    Use use(*state_);
    return get_device_control(*state_, cfg::device_control_no_snoop);
}

std::optional<Bar> Function::bar(unsigned index) const {
    check_bar_index(*state_, index);
    Use use(*state_);
    return state_->bars[index];
}

Result<Window> Function::map(unsigned index, std::uint64_t offset, std::uint64_t bytes, Caching caching) const {
    State& s = *state_;
    check_bar_index(s, index);
    const auto& bar = s.bars[index];
    const std::string name = "BAR" + std::to_string(index);
    if (!bar) s.refuse(name + " decodes nothing");
    if (bytes == 0) s.refuse("a window on " + name + " of 0 bytes");
    if (offset > bar->bytes || bytes > bar->bytes - offset)
        s.refuse("a window of " + text::bytes(bytes) + " at " + text::hex(offset) + " is outside " + name + " of " +
                 text::bytes(bar->bytes));
    if (caching == Caching::WriteCombining && !bar->prefetchable)
        s.refuse(name + " is not prefetchable and cannot be mapped write-combining");
    Use use(s);
    std::lock_guard lock(s.records);
    auto window = s.ops->map(index, offset, bytes, caching);
    if (!window) return std::unexpected(std::move(window).error());
    s.windows.push_back(*window);
    return window;
}

void Function::unmap(const Window& window) const {
    State& s = *state_;
    Use use(s);
    std::lock_guard lock(s.records);
    auto it = std::find(s.windows.begin(), s.windows.end(), window);
    if (it == s.windows.end()) s.refuse("unmap of a window this function did not map, or gave back");
    s.windows.erase(it);
    s.ops->unmap(window);
}

Result<Dma> Function::alloc_dma(std::uint64_t bytes, Contiguity contiguity, std::optional<std::uintptr_t> va) const {
    State& s = *state_;
    if (bytes == 0) s.refuse("DMA memory of 0 bytes");
    if (bytes > std::numeric_limits<std::uint64_t>::max() - (s.page - 1))
        s.refuse("DMA memory of " + text::bytes(bytes) + " does not fit the address space");
    const std::uint64_t rounded = (bytes + s.page - 1) / s.page * s.page;
    if (va) {
        if (*va % s.page != 0) s.refuse("DMA memory at " + text::hex(*va) + " does not start on a page");
        if (!is_reserved(*va, rounded))
            s.refuse("DMA memory of " + text::bytes(rounded) + " at " + text::hex(*va) +
                     " is not inside a range Machine::reserve reserved");
    }
    Use use(s);
    std::lock_guard lock(s.records);
    auto dma = s.ops->alloc_dma(contiguity, va, below(s.dma_bits), rounded);
    if (!dma) return std::unexpected(std::move(dma).error());
    if (!*dma)
        return fail(s.bus, ": no memory for ", text::bytes(rounded), " of ",
                    contiguity == Contiguity::Contiguous ? "contiguous " : "", "DMA memory below ",
                    text::hex(below(s.dma_bits)));
    s.dmas.push_back(**dma);
    return std::move(**dma);
}

void Function::free_dma(const Dma& dma) const {
    State& s = *state_;
    Use use(s);
    std::lock_guard lock(s.records);
    auto it = std::find_if(s.dmas.begin(), s.dmas.end(), [&](const Dma& d) { return d.window == dma.window; });
    if (it == s.dmas.end()) s.refuse("free_dma of memory this function did not allocate, or gave back");
    const Window window = it->window;
    s.dmas.erase(it);
    s.ops->free_dma(window);
}

void Function::set_dma_bits(unsigned bits) const {
    if (bits < 32 || bits > 64) state_->refuse("DMA address bits " + std::to_string(bits) + " is not 32..64");
    Use use(*state_);
    state_->dma_bits = bits;
}

Result<std::vector<Run>> Function::pin(const void* address, std::uint64_t bytes) const {
    State& s = *state_;
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    if (bytes == 0) s.refuse("a pin of 0 bytes");
    if (at % s.page != 0) s.refuse("a pin at " + text::hex(at) + " does not start on a page");
    if (bytes > std::numeric_limits<std::uintptr_t>::max() - at)
        s.refuse("a pin of " + text::bytes(bytes) + " at " + text::hex(at) + " wraps the address space");
    Use use(s);
    std::lock_guard lock(s.records);
    if (s.addressing == Addressing::Physical) {
        const bool given = std::any_of(s.dmas.begin(), s.dmas.end(), [&](const Dma& d) {
            const auto base = reinterpret_cast<std::uintptr_t>(d.window.data());
            return d.window.is_mapped() && at >= base && at - base <= d.window.size() &&
                   bytes <= d.window.size() - (at - base);
        });
        if (!given)
            return fail(s.bus, ": cannot pin ", text::bytes(bytes), " at ", text::hex(at),
                        ": the function reaches physical addresses (no IOMMU), and memory alloc_dma did not give "
                        "goes back to the system when the process dies while the device may still write it");
    }
    auto runs = s.ops->pin(below(s.dma_bits), at, bytes);
    if (!runs) return std::unexpected(std::move(runs).error());
    if (!*runs)
        return fail(s.bus, ": no room to pin ", text::bytes(bytes), " at ", text::hex(at), " below ",
                    text::hex(below(s.dma_bits)));
    s.pins.push_back({at, bytes});
    return std::move(**runs);
}

void Function::unpin(const void* address, std::uint64_t bytes) const {
    State& s = *state_;
    const auto at = reinterpret_cast<std::uintptr_t>(address);
    Use use(s);
    std::lock_guard lock(s.records);
    auto it = std::find_if(s.pins.begin(), s.pins.end(),
                           [&](const State::Pin& p) { return p.address == at && p.bytes == bytes; });
    if (it == s.pins.end())
        s.refuse("unpin of " + text::bytes(bytes) + " at " + text::hex(at) + ", which this function did not pin");
    s.pins.erase(it);
    s.ops->unpin(at, bytes);
}

Result<Run> Function::map_peer(std::string_view provider, unsigned bar, std::uint64_t offset,
                               std::uint64_t bytes) const {
    State& s = *state_;
    if (!is_address(provider)) s.refuse("map_peer of \"" + std::string(provider) + "\", which is not a bus address");
    if (provider == s.bus) s.refuse("map_peer of its own BAR");
    check_bar_index(s, bar);
    const std::string what = std::string(provider) + " BAR" + std::to_string(bar);
    if (bytes == 0) s.refuse("map_peer of 0 bytes of " + what);
    if (offset % s.page != 0 || bytes % s.page != 0)
        s.refuse("map_peer of " + text::bytes(bytes) + " at " + text::hex(offset) + " of " + what +
                 ": not whole pages of " + text::bytes(s.page));
    if (bytes > std::numeric_limits<std::uint64_t>::max() - offset)
        s.refuse("map_peer of " + text::bytes(bytes) + " at " + text::hex(offset) + " of " + what + " wraps");
    Use use(s);
    if (s.addressing == Addressing::Physical)
        return fail(s.bus, ": cannot map ", text::bytes(bytes), " of ", what,
                    ": the function reaches physical addresses (no IOMMU), so it has no IOMMU domain to map into; "
                    "it reaches the BAR at its bus address, where the bus carries its requests there");
    std::lock_guard lock(s.records);
    auto mapped = s.ops->map_peer(provider, bar, offset, bytes, below(s.dma_bits));
    if (!mapped) return std::unexpected(std::move(mapped).error());
    if (!*mapped)
        return fail(s.bus, ": no room in its IOMMU domain for ", text::bytes(bytes), " of ", what, " below ",
                    text::hex(below(s.dma_bits)));
    const Run run{**mapped, bytes};
    s.peers.push_back(run);
    return run;
}

void Function::unmap_peer(const Run& mapped) const {
    State& s = *state_;
    Use use(s);
    std::lock_guard lock(s.records);
    auto it = std::find(s.peers.begin(), s.peers.end(), mapped);
    if (it == s.peers.end())
        s.refuse("unmap_peer of " + text::bytes(mapped.bytes) + " at " + text::hex(mapped.address.value) +
                 ", which map_peer did not give, or gave back");
    s.peers.erase(it);
    s.ops->unmap_peer(mapped.address, mapped.bytes);
}

bool Function::interrupt(unsigned vector, std::chrono::nanoseconds timeout) const {
    Use use(*state_);
    return state_->ops->interrupt(vector, timeout);
}

Result<void> Function::reset() const {
    Use use(*state_);
    auto reset = state_->ops->reset();
    if (!reset) return reset;
    // The reset stopped whatever the device did for a dead process: what it left can go.
    if (state_->inherited) return state_->ops->forget();
    return {};
}

bool Function::release() const { return state_->release(); }

std::optional<std::string> Function::failed() const { return state_->machine.failed(); }

bool Function::released() const {
    std::lock_guard lock(state_->mutex);
    return state_->phase != State::Phase::Live;
}

std::size_t Function::windows() const {
    std::lock_guard lock(state_->records);
    return state_->windows.size();
}

std::size_t Function::pins() const {
    std::lock_guard lock(state_->records);
    return state_->pins.size() + state_->peers.size();
}

std::size_t Function::dma_allocations() const {
    std::lock_guard lock(state_->records);
    return state_->dmas.size();
}

}  // namespace rig::pci

// The operations on a taken function of a simulated machine (transport.hpp's FunctionOps;
// docs/api.md, "Transports").
//
// Every call is recorded (faults.cpp) and answers as a failed transport does once the
// machine failed: configuration reads all ones, writes dropped, requests an Error with the
// machine's reason. What the take holds is the Slot's records; each is dropped before it
// is given back, so an unmap, free_dma, unpin or release cut by an exception leaves the
// rest, and a give-back of something not held is counted (Faults::double_give_backs).
//
// Release, in the page's order: Bus Master Enable off (and read back); the windows; then,
// only where bus mastering reads off, the pins, the peer mappings and the DMA memory. Where it does not, the
// memory stays reachable by the function (kept), release answers false, and the next take
// of the function finds it inherited until forget(). A release cut by an exception (an
// injected one, at a chosen give-back) continues where it stopped when called again.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "rig/pci/config.hpp"
#include "rig/text.hpp"
#include "state.hpp"
#include "vfio_kernel.hpp"

namespace rig::sim {
namespace {

namespace cfg = pci::config;

// Process memory at its address, through the transport's calls (Faults::unmapped_dma): a
// DMA window as a machine reached over a network hands it out. Width accesses are atomic
// (sequentially consistent), as a mapped window's ordered accesses are.
class MemoryTransport final : public pci::Transport {
public:
    explicit MemoryTransport(std::shared_ptr<System::State> state) : state_(std::move(state)) {}

    std::uint64_t read(std::uint64_t address, unsigned width) override {
        if (!state_->call(Operation::Read, {})) return ~std::uint64_t{0};
        switch (width) {
        case 1: return std::atomic_ref(*reinterpret_cast<std::uint8_t*>(address)).load();
        case 2: return std::atomic_ref(*reinterpret_cast<std::uint16_t*>(address)).load();
        case 4: return std::atomic_ref(*reinterpret_cast<std::uint32_t*>(address)).load();
        default: return std::atomic_ref(*reinterpret_cast<std::uint64_t*>(address)).load();
        }
    }
    void write(std::uint64_t address, unsigned width, std::uint64_t value) override {
        if (!state_->call(Operation::Write, {})) return;
        switch (width) {
        case 1:
            std::atomic_ref(*reinterpret_cast<std::uint8_t*>(address)).store(static_cast<std::uint8_t>(value));
            break;
        case 2:
            std::atomic_ref(*reinterpret_cast<std::uint16_t*>(address)).store(static_cast<std::uint16_t>(value));
            break;
        case 4:
            std::atomic_ref(*reinterpret_cast<std::uint32_t*>(address)).store(static_cast<std::uint32_t>(value));
            break;
        default: std::atomic_ref(*reinterpret_cast<std::uint64_t*>(address)).store(value); break;
        }
    }
    void read(std::uint64_t address, std::span<std::byte> out) override {
        if (state_->call(Operation::Read, {}))
            std::memcpy(out.data(), reinterpret_cast<const void*>(address), out.size());
        else std::fill(out.begin(), out.end(), std::byte{0xff});
    }
    void write(std::uint64_t address, std::span<const std::byte> in) override {
        if (state_->call(Operation::Write, {})) std::memcpy(reinterpret_cast<void*>(address), in.data(), in.size());
    }
    std::optional<std::string> failed() const override { return state_->failed(); }

private:
    std::shared_ptr<System::State> state_;
};

class SimFunctionOps final : public pci::FunctionOps {
public:
    SimFunctionOps(std::shared_ptr<System::State> state, Slot& slot, std::shared_ptr<pci::Transport> transport,
                   bool inherited)
        : state_(std::move(state)), slot_(slot), transport_(std::move(transport)), inherited_(inherited) {}
    ~SimFunctionOps() override {
        for (int attempt = 0; attempt < 4; ++attempt) {
            try {
                release();
                return;
            } catch (...) {}
        }
    }

    pci::Addressing addressing() const override {
        return slot_.iommu ? pci::Addressing::Iommu : pci::Addressing::Physical;
    }
    bool inherited() const override { return inherited_; }

    std::uint32_t config(std::uint32_t offset, unsigned bytes) override {
        if (!call(Operation::Config)) return static_cast<std::uint32_t>((std::uint64_t{1} << (8 * bytes)) - 1);
        return slot_.read_config(offset, bytes);
    }
    void set_config(std::uint32_t offset, unsigned bytes, std::uint32_t value) override {
        if (call(Operation::SetConfig)) slot_.write_config(offset, bytes, value);
    }

    std::optional<pci::Bar> bar(unsigned index) override {
        call(Operation::Bar);  // a BAR's place is known without asking the machine
        return index < slot_.bars.size() ? slot_.bars[index] : std::nullopt;
    }

    Result<pci::Window> map(unsigned index, std::uint64_t offset, std::uint64_t bytes, pci::Caching) override {
        if (!call(Operation::Map)) return unreachable();
        const auto& bar = slot_.bars.at(index);
        if (!bar) return fail(state_->name, ": ", slot_.bus, ": BAR", std::to_string(index), " decodes nothing");
        pci::Window window;
        WindowRecord record;
        if (auto memory = slot_.memory[index]; !memory.empty()) {
            window = pci::Window::mapped(memory.data() + offset, bytes);
            record = {reinterpret_cast<std::uintptr_t>(window.data()), bytes};
        } else {
            window = pci::Window::remote(transport_, bar->address.value + offset, bytes);
            record = {window.address(), bytes};
        }
        std::lock_guard hold(slot_.holdings_mutex);
        slot_.windows.push_back(record);
        return window;
    }

    void unmap(const pci::Window& window) override {
        call(Operation::Unmap);  // given back here even where the machine cannot be reached
        const std::uint64_t address =
            window.is_mapped() ? reinterpret_cast<std::uintptr_t>(window.data()) : window.address();
        std::lock_guard hold(slot_.holdings_mutex);
        auto it = std::find_if(slot_.windows.begin(), slot_.windows.end(),
                               [&](const WindowRecord& w) { return w.address == address && w.bytes == window.size(); });
        if (it == slot_.windows.end()) {
            ++state_->injection.double_give_backs;
            return;
        }
        slot_.windows.erase(it);
        ++slot_.given_back.windows;
    }

    bool interrupt(unsigned vector, std::chrono::nanoseconds timeout) override {
        if (!call(Operation::Interrupt)) return false;
        return state_->wait(slot_, vector, timeout);
    }

    Result<void> reset() override {
        if (!call(Operation::Reset)) return unreachable();
        slot_.function_level_reset();
        return {};
    }

    Result<void> forget() override {
        if (!call(Operation::Forget)) return unreachable();
        std::lock_guard hold(slot_.holdings_mutex);
        std::unique_lock memory(state_->memory_mutex);
        while (!slot_.kept.empty()) {
            Held held = std::move(slot_.kept.back());
            slot_.kept.pop_back();
            state_->give_back(slot_, held);
        }
        return {};
    }

    Result<std::optional<pci::Dma>> alloc_dma(pci::Contiguity contiguity, std::optional<std::uintptr_t> va,
                                              std::uint64_t below, std::uint64_t bytes) override {
        if (!call(Operation::AllocDma)) return unreachable();
        auto mapped = pci::DmaMemory::map(*pci::vfio::linux_kernel(), bytes, va, pci::Residency::Movable,
                                          state_->name + ": " + slot_.bus + ": alloc_dma");
        if (!mapped) return std::unexpected(std::move(mapped).error());
        auto memory = std::make_shared<pci::DmaMemory>(std::move(*mapped));
        const auto host = reinterpret_cast<std::uintptr_t>(memory->data());
        pci::Dma dma;
        {
            std::lock_guard hold(slot_.holdings_mutex);
            std::unique_lock lock(state_->memory_mutex);
            // Physical addresses are bounded by `below` only where the function uses them.
            const std::uint64_t frame_bound = slot_.iommu ? ~std::uint64_t{0} : below;
            auto frames = state_->give_frames(host, bytes, contiguity, frame_bound, memory);
            if (!frames) return std::optional<pci::Dma>();
            Held held{host, bytes, std::move(*frames), std::nullopt, memory};
            if (slot_.iommu) {
                held.iova = state_->map_iova(slot_, held.frames, below);
                if (!held.iova) {
                    state_->take_frames(held.frames);
                    return std::optional<pci::Dma>();
                }
            }
            pci::Window window = state_->injection.unmapped_dma
                                     ? pci::Window::remote(std::make_shared<MemoryTransport>(state_), host, bytes)
                                     : pci::Window::mapped(memory->data(), bytes);
            dma = pci::Dma{std::move(window), state_->runs_of(held)};
            slot_.dmas.push_back(std::move(held));
        }
        state_->step(Operation::AllocDma, 0);  // the machine holds it; Function does not yet
        return std::optional(std::move(dma));
    }

    void free_dma(const pci::Window& window) override {
        call(Operation::FreeDma);
        const std::uint64_t address =
            window.is_mapped() ? reinterpret_cast<std::uintptr_t>(window.data()) : window.address();
        std::lock_guard hold(slot_.holdings_mutex);
        auto it =
            std::find_if(slot_.dmas.begin(), slot_.dmas.end(), [&](const Held& h) { return h.address == address; });
        if (it == slot_.dmas.end()) {
            ++state_->injection.double_give_backs;
            return;
        }
        Held held = std::move(*it);
        slot_.dmas.erase(it);
        std::unique_lock lock(state_->memory_mutex);
        state_->give_back(slot_, held);
        ++slot_.given_back.dma_allocations;
    }

    Result<std::optional<std::vector<pci::Run>>> pin(std::uint64_t below, std::uintptr_t address,
                                                     std::uint64_t bytes) override {
        if (!call(Operation::Pin)) return unreachable();
        std::vector<pci::Run> runs;
        {
            std::lock_guard hold(slot_.holdings_mutex);
            std::unique_lock lock(state_->memory_mutex);
            if (!slot_.iommu) {
                // A transport checks what hardware would not survive: without an IOMMU only
                // pages alloc_dma gave may be pinned (Function refuses the rest first).
                for (std::uint64_t done = 0; done < bytes; done += state_->page)
                    if (!state_->host_frames.contains(address + done))
                        return fail(state_->name, ": ", slot_.bus, ": pin at ", text::hex(address),
                                    ": not memory alloc_dma gave");
            }
            const std::uint64_t frame_bound = slot_.iommu ? ~std::uint64_t{0} : below;
            auto frames = state_->give_frames(address, bytes, pci::Contiguity::Any, frame_bound, nullptr);
            if (!frames) return std::optional<std::vector<pci::Run>>();
            Held held{address, bytes, std::move(*frames), std::nullopt, nullptr};
            if (slot_.iommu) {
                held.iova = state_->map_iova(slot_, held.frames, below);
                if (!held.iova) {
                    state_->take_frames(held.frames);
                    return std::optional<std::vector<pci::Run>>();
                }
            }
            runs = state_->runs_of(held);
            slot_.pins.push_back(std::move(held));
        }
        state_->step(Operation::Pin, 0);
        return std::optional(std::move(runs));
    }

    void unpin(std::uintptr_t address, std::uint64_t bytes) override {
        call(Operation::Unpin);
        std::lock_guard hold(slot_.holdings_mutex);
        auto it = std::find_if(slot_.pins.begin(), slot_.pins.end(),
                               [&](const Held& h) { return h.address == address && h.bytes == bytes; });
        if (it == slot_.pins.end()) {
            ++state_->injection.double_give_backs;
            return;
        }
        Held held = std::move(*it);
        slot_.pins.erase(it);
        std::unique_lock lock(state_->memory_mutex);
        state_->give_back(slot_, held);
        ++slot_.given_back.pins;
    }

    // The IOMMU domain maps IOVA pages to the BAR's bus pages: a request at those IOVAs
    // reaches the root complex (no BAR below decodes an IOVA: they avoid the aperture),
    // whose translation gives the BAR's address, which it carries down where its rule
    // allows (bus.cpp).
    Result<std::optional<pci::DmaAddress>> map_peer(std::string_view provider, unsigned bar, std::uint64_t offset,
                                                    std::uint64_t bytes, std::uint64_t below) override {
        if (!call(Operation::MapPeer)) return unreachable();
        const std::string what = std::string(provider) + " BAR" + std::to_string(bar);
        const auto refuse = [&](const std::string& why) {
            return fail(state_->name, ": ", slot_.bus, ": cannot map ", text::bytes(bytes), " of ", what, ": ", why);
        };
        if (!slot_.iommu) return refuse("it reaches physical addresses; there is no IOMMU domain to map into");
        const auto ref = state_->topology.find(provider);
        if (!ref) return refuse("no such function");
        const auto& f = state_->topology[*ref];
        if (bar >= f.spec.bars.size() || f.spec.bars[bar].bytes == 0 || f.spec.is_bridge())
            return refuse(what + " decodes nothing");
        const std::uint64_t size = f.spec.bars[bar].bytes;
        if (offset > size || bytes > size - offset)
            return refuse(text::hex(offset) + " is outside " + what + " of " + text::bytes(size));
        Held held{0, bytes, {}, std::nullopt, nullptr, true};
        for (std::uint64_t done = 0; done < bytes; done += state_->page)
            held.frames.push_back((f.bar_address[bar] + offset + done) / state_->page);
        pci::DmaAddress at;
        {
            std::lock_guard hold(slot_.holdings_mutex);
            std::unique_lock lock(state_->memory_mutex);
            held.iova = state_->map_iova(slot_, held.frames, below);
            if (!held.iova) return std::optional<pci::DmaAddress>();
            held.address = static_cast<std::uintptr_t>(*held.iova);
            at = pci::DmaAddress{*held.iova};
            slot_.peers.push_back(std::move(held));
        }
        state_->step(Operation::MapPeer, 0);
        return std::optional(at);
    }

    void unmap_peer(pci::DmaAddress address, std::uint64_t bytes) override {
        call(Operation::UnmapPeer);
        std::lock_guard hold(slot_.holdings_mutex);
        auto it = std::find_if(slot_.peers.begin(), slot_.peers.end(),
                               [&](const Held& h) { return h.iova == address.value && h.bytes == bytes; });
        if (it == slot_.peers.end()) {
            ++state_->injection.double_give_backs;
            return;
        }
        Held held = std::move(*it);
        slot_.peers.erase(it);
        std::unique_lock lock(state_->memory_mutex);
        state_->give_back(slot_, held);
        ++slot_.given_back.pins;
    }

    bool release() override {
        std::lock_guard hold(slot_.holdings_mutex);
        if (released_) return answer_;
        if (!bus_master_read_) {
            const bool reachable = call(Operation::Release);
            if (reachable) {
                const auto command = slot_.read_config(cfg::command, 2);
                slot_.write_config(cfg::command, 2, command & ~std::uint32_t{cfg::command_bus_master});
            }
            // A function that stopped answering issues nothing: its mastering is moot.
            bus_master_off_ = reachable && (slot_.stopped || !slot_.bus_master);
            bus_master_read_ = true;
        }
        while (!slot_.windows.empty()) {
            state_->step(Operation::Release, slot_.release_step);
            slot_.windows.pop_back();
            ++slot_.given_back.windows;
            ++slot_.release_step;
        }
        if (!bus_master_off_) {
            // The function may still write this memory: it stays its own.
            for (auto* list : {&slot_.pins, &slot_.peers, &slot_.dmas}) {
                for (auto& held : *list) slot_.kept.push_back(std::move(held));
                list->clear();
            }
            return finish(false);
        }
        std::unique_lock memory(state_->memory_mutex);
        for (auto* list : {&slot_.pins, &slot_.peers, &slot_.dmas}) {
            while (!list->empty()) {
                state_->step(Operation::Release, slot_.release_step);
                Held held = std::move(list->back());
                list->pop_back();
                state_->give_back(slot_, held);
                ++(list == &slot_.dmas ? slot_.given_back.dma_allocations : slot_.given_back.pins);
                ++slot_.release_step;
            }
        }
        return finish(true);
    }

private:
    bool call(Operation operation) { return state_->call(operation, slot_.bus); }
    std::unexpected<std::string> unreachable() const { return std::unexpected(state_->failed().value_or("")); }

    bool finish(bool answer) {
        if (slot_.msix && !state_->failed()) {
            const auto control = slot_.read_config(slot_.msix + cfg::msix_message_control, 2);
            slot_.write_config(slot_.msix + cfg::msix_message_control, 2, control & ~std::uint32_t{cfg::msix_enable});
        }
        {
            std::lock_guard lock(slot_.irq_mutex);
            std::fill(slot_.pending.begin(), slot_.pending.end(), 0);
        }
        {
            std::lock_guard lock(state_->take_mutex);
            slot_.taken = false;
        }
        slot_.release_step = 0;
        released_ = true;
        answer_ = answer;
        return answer;
    }

    std::shared_ptr<System::State> state_;
    Slot& slot_;
    std::shared_ptr<pci::Transport> transport_;
    bool inherited_;
    bool bus_master_read_ = false;
    bool bus_master_off_ = false;
    bool released_ = false;
    bool answer_ = true;
};

}  // namespace

std::unique_ptr<pci::FunctionOps> make_function_ops(std::shared_ptr<System::State> state, Slot& slot,
                                                    std::shared_ptr<pci::Transport> transport, bool inherited) {
    return std::make_unique<SimFunctionOps>(std::move(state), slot, std::move(transport), inherited);
}

}  // namespace rig::sim

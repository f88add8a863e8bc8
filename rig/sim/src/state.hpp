// What a simulated machine shares (internal to rig_sim): its topology, its functions with
// their models ("slots"), its system memory and IOMMU domains, its fault counts and its
// fault injection. The members are defined by topic:
//   system.cpp        building, the machine's Ops (functions, take, reserve), counts
//   function_config.cpp  a slot's configuration space: writes, MSI-X, FLR
//   memory.cpp        system memory at physical addresses, IOMMU domains, translation
//   bus.cpp           a model's DMA (Port), BAR decoding, routing, remote windows, interrupts
//   function_ops.cpp  FunctionOps of a take: windows, alloc_dma, pin, release
//   faults.cpp        call records and fault injection (rig/sim/faults.hpp)
//
// Locks, outermost first: Slot::holdings_mutex (what a take holds), State::memory_mutex
// (shared by DMA, exclusive for mapping changes), then the leaves (State::take_mutex,
// Slot::config_mutex, Slot::irq_mutex, State::fault_mutex, State::route_mutex,
// Injection::mutex), none of which is held while another is taken. Device::read and
// Device::write are called with no lock of the state held; Device::bus_master and
// Device::reset at most with a holdings_mutex (from release), never with memory_mutex or
// config_mutex, so a model may issue DMA from inside any of them.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "dma_memory.hpp"
#include "range_allocator.hpp"
#include "rig/pci/machine.hpp"
#include "rig/pci/transport.hpp"
#include "rig/sim/device.hpp"
#include "rig/sim/faults.hpp"
#include "rig/sim/system.hpp"
#include "rig/sim/topology.hpp"

namespace rig::sim {

struct Slot;

// The pages of one DMA allocation or pin, and where the function reaches them.
struct Held {
    std::uintptr_t address = 0;              // the process address of byte 0
    std::uint64_t bytes = 0;                 // as asked (a pin's bytes need not be whole pages)
    std::vector<std::uint64_t> frames;       // the physical page of each page
    std::optional<std::uint64_t> iova;       // behind the IOMMU: the IOVA of byte 0
    std::shared_ptr<pci::DmaMemory> memory;  // alloc_dma's memory; null for a pin
    bool peer = false;                       // map_peer's: `frames` are a BAR's bus pages, no memory
};

// A window the function holds: its process address (mapped) or transport address.
struct WindowRecord {
    std::uint64_t address = 0;
    std::uint64_t bytes = 0;
};

// An IOMMU domain: IOVA pages to physical pages, for one function. A physical page is
// system memory (a frame) or a page of a BAR (map_peer), as the root complex decodes it.
struct Domain {
    pci::RangeAllocator iovas;
    std::map<std::uint64_t, std::uint64_t> pages;  // IOVA page number -> physical page number
};

// A function with a device model.
class SlotPort final : public Port {
public:
    explicit SlotPort(Slot& slot) : slot_(slot) {}
    DmaStatus read(pci::DmaAddress address, std::span<std::byte> out) override;
    DmaStatus write(pci::DmaAddress address, std::span<const std::byte> in) override;
    void interrupt(unsigned vector) override;
    const std::string& bus() const override;

private:
    Slot& slot_;
};

struct Slot {
    Slot(System::State& s, std::size_t i, std::string b, std::shared_ptr<Device> m)
        : state(s), index(i), bus(std::move(b)), model(std::move(m)), port(*this) {}

    System::State& state;
    std::size_t index;  // in the topology
    std::string bus;
    std::shared_ptr<Device> model;
    Identity identity;
    std::array<std::optional<pci::Bar>, 6> bars{};
    std::array<std::span<std::byte>, 6> memory{};  // a memory BAR's bytes (Device::memory)
    bool iommu = false;                            // its Spec has an IOMMU group
    // Its way up as the bus routes its requests: topology indices of the function, then
    // its upstream bridges, nearest first (a VF's are its PF's; the PF is not on it).
    std::vector<std::size_t> way;
    bool attached = false;  // Device::attach was called

    // Configuration space (function_config.cpp), guarded by config_mutex; the bits the
    // bus reads on every request are mirrored in atomics.
    std::mutex config_mutex;
    std::vector<std::uint8_t> config;
    std::vector<std::uint8_t> power_on;  // config as after power-on, for FLR
    std::vector<std::uint8_t> writable;  // per byte, the bits a write changes
    std::uint32_t express = 0;           // PCI Express capability offset
    std::uint32_t msix = 0;              // MSI-X capability offset; 0: none
    std::atomic<bool> bus_master{false};
    std::atomic<bool> memory_space{false};
    std::atomic<bool> msix_live{false};  // enabled and not masked
    std::atomic<bool> stopped{false};
    std::atomic<bool> refuse_bus_master_off{false};

    // The take: changed under State::take_mutex, read by remote windows without it.
    std::atomic<bool> taken{false};

    // What the take holds (guarded by holdings_mutex; frames and domains by memory_mutex).
    std::mutex holdings_mutex;
    std::vector<WindowRecord> windows;
    std::vector<Held> dmas;
    std::vector<Held> pins;
    std::vector<Held> peers;  // map_peer's, counted as pins
    std::vector<Held> kept;   // memory a release could not give back: inherited by the next take
    Domain domain;
    struct GiveBacks {
        std::size_t windows = 0, pins = 0, dma_allocations = 0;
    } given_back;
    std::uint32_t release_step = 0;  // give-backs of the release in progress

    // MSI-X vectors raised and not yet consumed.
    std::mutex irq_mutex;
    std::condition_variable irq;
    std::vector<std::uint64_t> pending;

    SlotPort port;

    // function_config.cpp
    void build_config(const std::vector<std::uint8_t>& from_topology);
    std::uint32_t read_config(std::uint32_t offset, unsigned bytes);
    void write_config(std::uint32_t offset, unsigned bytes, std::uint32_t value);
    // A Function Level Reset: the model resets and the registers go back to power-on.
    void function_level_reset();
    // The take's configuration: Memory Space on, Bus Master off, MSI-X enabled.
    void take_config();
};

// Call records and injection (faults.cpp).
struct Injection {
    std::mutex mutex;
    std::atomic<bool> armed{false};      // something is set: take the slow path
    std::atomic<bool> recording{false};  // a Faults watches: calls are listed
    std::atomic<bool> failed{false};
    std::string why;          // guarded; set once failed
    std::vector<Call> calls;  // guarded; only while recording
    std::array<std::atomic<std::uint64_t>, 20> counts{};
    std::atomic<std::uint64_t> total{0};
    struct FailAt {
        Operation operation;
        std::optional<std::string> bus;
        std::string why;
    };
    std::optional<FailAt> fail_at;
    std::optional<std::uint64_t> fail_after;  // calls left before the failure
    std::string fail_after_why;
    std::optional<std::pair<Operation, std::size_t>> throw_in;
    std::atomic<std::size_t> double_give_backs{0};
    std::atomic<bool> unmapped_dma{false};  // Faults::unmapped_dma
};

struct System::State {
    std::string name;
    Topology topology;
    std::filesystem::path sysfs;
    bool own_sysfs = false;  // a temporary tree, removed with the state
    pci::Machine routes;     // Machine::at(sysfs): forwards and distance on the tree
    std::uint64_t page = pci::page_bytes;
    std::vector<std::unique_ptr<Slot>> slots;            // by topology index; null without a model
    std::uint64_t aperture_start = 0, aperture_end = 0;  // the BARs' bus addresses
    // Every BAR of a slot, in slot order, for decode.
    struct BarRange {
        std::uint64_t start = 0, bytes = 0;
        Slot* slot = nullptr;
        unsigned bar = 0;
    };
    std::vector<BarRange> bar_ranges;

    std::mutex take_mutex;  // guards the change of Slot::taken

    // System memory (memory.cpp), guarded by memory_mutex.
    mutable std::shared_mutex memory_mutex;
    pci::RangeAllocator frames;  // free physical pages (addresses)
    struct Frame {
        std::byte* host = nullptr;
        std::shared_ptr<pci::DmaMemory> owner;  // keeps alloc_dma memory mapped while reached
        unsigned refs = 0;
    };
    std::map<std::uint64_t, Frame> frame_map;                       // physical page number -> page
    std::unordered_map<std::uintptr_t, std::uint64_t> host_frames;  // process page -> physical page number
    std::uint64_t frames_in_use = 0;

    // The root complex's rule (bus.cpp), asked of the sysfs tree under route_mutex once per
    // (provider, client) slot index pair; the answer kept in
    // host_bridge_known[provider * slots.size() + client], which DMA reads without the lock.
    std::mutex route_mutex;
    static constexpr std::uint8_t rule_unknown = 0, rule_no = 1, rule_yes = 2;
    std::vector<std::atomic<std::uint8_t>> host_bridge_known;  // sized when the slots are

    // Faults (bus.cpp).
    mutable std::mutex fault_mutex;
    std::atomic<std::uint64_t> fault_count{0};
    std::deque<Fault> recent;

    mutable Injection injection;

    State(std::string n, Topology t, std::filesystem::path root, bool own);
    ~State();

    Slot& slot(std::string_view bus);  // throws std::invalid_argument where no model sits
    Slot* find(std::string_view bus);

    // memory.cpp: give the pages of [host, host + bytes) physical pages (alloc_dma's:
    // `memory` set; a pin's: null, reusing the frames pages already have). Contiguous
    // (alloc_dma only): one physical run. nullopt where no physical memory below `below`
    // is left.
    std::optional<std::vector<std::uint64_t>> give_frames(std::uintptr_t host, std::uint64_t bytes,
                                                          pci::Contiguity contiguity, std::uint64_t below,
                                                          std::shared_ptr<pci::DmaMemory> memory);
    void take_frames(const std::vector<std::uint64_t>& frames);
    // Maps frames at IOVAs of the slot's domain below `below`: the IOVA of byte 0, or nullopt.
    std::optional<std::uint64_t> map_iova(Slot& slot, const std::vector<std::uint64_t>& frames, std::uint64_t below);
    void unmap_iova(Slot& slot, std::uint64_t iova, std::size_t pages);
    // Gives back what `held` holds (its IOVAs and frames).
    void give_back(Slot& slot, Held& held);
    // The run list of held memory as the function reaches it.
    std::vector<pci::Run> runs_of(const Held& held) const;
    // The physical address the root complex sees for `address` of `slot`'s request: its
    // IOMMU domain's translation, or the address itself without an IOMMU; nullopt with why
    // where the domain maps nothing there (memory_mutex held shared).
    std::optional<std::uint64_t> translate(const Slot& slot, std::uint64_t address, std::string& why) const;
    // The process address of system memory at physical address `physical`, or nullptr.
    std::byte* memory_at(std::uint64_t physical) const;

    // bus.cpp
    DmaStatus dma(Slot& requester, pci::DmaAddress address, std::span<std::byte> read, std::span<const std::byte> write,
                  bool is_write);
    void count_fault(Fault fault);
    // Whether a switch or root port below the root complex carries client's requests to
    // provider's BAR untranslated: a common node of their ways, and no node of either leg
    // (the common one included) redirects (bus.cpp).
    bool direct(const Slot& provider, const Slot& client) const;
    // Whether the root complex carries client's requests to provider's BAR
    // (Machine::host_bridge_route on the tree).
    bool host_bridge_allows(const Slot& provider, const Slot& client);
    // The slot and BAR that decode [address, address + bytes) wholly; nullopt where none
    // decodes `address`; `partial` set where one decodes it but not to the end (the slot
    // and BAR are then the one that decodes `address`).
    struct Decoded {
        Slot* slot;
        unsigned bar;
        std::uint64_t offset;
    };
    std::optional<Decoded> decode(std::uint64_t address, std::uint64_t bytes, bool& partial);
    void raise(Slot& slot, unsigned vector);
    bool wait(Slot& slot, unsigned vector, std::chrono::nanoseconds timeout);

    // faults.cpp: records a call; false where the machine has failed (then the call
    // answers as a failed transport does).
    bool call(Operation operation, const std::string& bus);
    // Throws InjectedFault where throw_in(operation, step) is set and due.
    void step(Operation operation, std::size_t step);
    std::optional<std::string> failed() const;
};

// bus.cpp: the remote windows' accesses of a machine (register BARs).
std::shared_ptr<pci::Transport> make_transport(std::shared_ptr<System::State> state);
// function_ops.cpp: the operations on a function just taken.
std::unique_ptr<pci::FunctionOps> make_function_ops(std::shared_ptr<System::State> state, Slot& slot,
                                                    std::shared_ptr<pci::Transport> transport, bool inherited);

}  // namespace rig::sim

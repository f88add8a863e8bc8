// rig/sim/faults.hpp: fault injection and call records for a simulated machine. For
// tests only: the target rig_sim_faults gives this header; driver code, which links
// rig_sim alone, cannot include it (docs/design.md, "Simulation code").
//
// What can be made to go wrong, each as a PCI Express system or a transport would:
//  - the transport fails, for good, at a chosen call or after N more calls: from then on
//    Machine::failed() and Window::failed() say why (starting with the machine's name),
//    remote windows read all ones and drop writes, configuration reads give all ones,
//    and every operation that can fail fails with that reason;
//  - an operation throws part-way (InjectedFault): release after giving back some of
//    what the take held, alloc_dma and pin after the machine recorded the memory but
//    before Function could;
//  - a function stops answering, as a device that fell off the bus: its registers and
//    configuration read all ones and drop writes, its interrupts and DMA go nowhere;
//  - a function refuses to turn bus mastering off (the system refuses the write), so a
//    release keeps its memory and the next take finds it inherited.
// Thread safety: every member may be called from several threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rig/sim/system.hpp"

namespace rig::sim {

// The operations of a transport (rig/pci/transport.hpp), and a remote window's accesses.
enum class Operation {
    Functions,
    Take,
    Reserve,  // Ops
    Config,
    SetConfig,
    Bar,
    Map,
    Unmap,
    Interrupt,  // FunctionOps
    Reset,
    Forget,
    AllocDma,
    FreeDma,
    Pin,
    Unpin,
    Release,
    Read,
    Write,  // Transport (remote windows)
    MapPeer,
    UnmapPeer,  // FunctionOps, peer BARs
};
std::string_view to_string(Operation operation);

// One call the machine received: the operation and the function's bus address ("" for
// the machine's own calls).
struct Call {
    Operation operation;
    std::string bus;
    friend bool operator==(const Call&, const Call&) = default;
};

// What injection throws.
struct InjectedFault : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Faults {
public:
    explicit Faults(const System& system);

    // Every call since the first Faults of the machine was made, in order (a machine no
    // Faults watches lists nothing, so it does not grow). Read and Write are counted
    // (count, since the machine was built) but not listed.
    std::vector<Call> calls() const;
    std::size_t count() const;  // all calls, accesses included
    std::size_t count(Operation operation) const;

    // The transport fails at the next call of `operation` (of the function at `bus`,
    // where given), before running it.
    void fail_at(Operation operation, std::string why, std::optional<std::string> bus = std::nullopt);
    // The transport fails at the call after the next `calls` calls.
    void fail_after(std::size_t calls, std::string why);
    // Fails the transport now.
    void fail(std::string why);

    // The next `operation` throws InjectedFault at its `step`: for Release, after giving
    // back `step` of the windows, pins and DMA allocations (in that order); for AllocDma
    // and Pin (step ignored), once the machine holds the memory, before returning it.
    void throw_in(Operation operation, std::size_t step = 0);

    // DMA memory allocated from now on is handed out as a remote window, reached through a
    // transport of the machine's (Read and Write calls), not mapped into the process: as on
    // a machine reached over a network. The models reach the same memory as before.
    void unmapped_dma();

    // The function at `bus` stops answering. Throws std::invalid_argument if no model
    // sits there.
    void stop(std::string_view bus);
    // The function at `bus` keeps Bus Master Enable on whatever is written.
    void refuse_bus_master_off(std::string_view bus);

    // Maps `bytes` (whole pages) at IOVA `iova` of the IOMMU domain of the function at
    // `bus` to the pages the same domain maps at IOVA `as`, whatever else lies at `iova`:
    // as an x86 VFIO user may map an IOVA that a peer's BAR also decodes (Linux reserves
    // the host bridge's windows only in the DMA API's own domains), so that a test can
    // show which of the two a request reaches. Throws std::invalid_argument if no model
    // sits at `bus`, it has no IOMMU, the addresses are not on pages, or nothing is
    // mapped at `as`.
    void alias_iova(std::string_view bus, pci::DmaAddress iova, pci::DmaAddress as, std::uint64_t bytes);

    // Give-backs of something already given back or never held (must stay 0), and
    // give-backs in all, by what was given back.
    std::size_t double_give_backs() const;
    struct GiveBacks {
        std::size_t windows = 0, pins = 0, dma_allocations = 0;
    };
    GiveBacks give_backs(std::string_view bus) const;

private:
    std::shared_ptr<System::State> state_;
};

}  // namespace rig::sim

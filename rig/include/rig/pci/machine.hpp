// rig/pci/machine.hpp: machines, their PCI functions, and the routes between them
// (docs/api.md, "Machine", is the contract).
//
// A Machine is a computer whose PCI functions this process reaches:
//  - Machine::local(): this computer, read from /sys/bus/pci and /sys/devices; its
//    functions are taken through Linux VFIO (function.hpp).
//  - Machine::at(root): the same files under `root` (a `rig snapshot`, a test fixture).
//    Listings and routes are computed exactly as for local(); nothing can be taken.
//  - Machine::make(name, ops[, sysfs]): another computer reached by a transport
//    (transport.hpp). Where the transport sent a directory of its sysfs files, routes are
//    read from them; otherwise every function of it is unread.
// A Machine is a cheap handle: copies share one machine. All members are const and safe
// to call from several threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/dma.hpp"
#include "rig/pci/link.hpp"
#include "rig/result.hpp"

namespace rig::pci {

class Claims;
class Ops;

// The identity of a function.
struct Id {
    std::string bus;               // its bus address, "0000:41:00.0"
    std::uint16_t vendor = 0;      // 0x14e4 for Broadcom
    std::uint16_t device = 0;      // assigned by its vendor
    std::uint32_t class_code = 0;  // 24 bits: base class, subclass, programming interface
    friend bool operator==(const Id&, const Id&) = default;
};

// How far apart two functions of a machine are, nearest first (docs/api.md, "Routes").
enum class Distance {
    Switch,  // below a bridge that both ways up to the host bridge pass (a switch port, a root port)
    Bridge,  // below one host bridge, with no such bridge
    System,  // below two host bridges
};

// Linux's name for the way a client's requests reach a provider's BAR
// (include/linux/pci-p2pdma.h; docs/p2pdma.md §2).
enum class Verdict {
    Unread,             // a function is unread: no answer
    Direct,             // PCI_P2PDMA_MAP_BUS_ADDR: at the BAR's bus address, below a common bridge
    ThroughHostBridge,  // PCI_P2PDMA_MAP_THRU_HOST_BRIDGE: through an allowed root complex
    NotSupported,       // PCI_P2PDMA_MAP_NOT_SUPPORTED
};

// A function on the way whose ACS Control redirects peer-to-peer requests.
struct Redirect {
    std::string bus;        // the function's bus address
    std::uint16_t control;  // its ACS Control register; RR 0x4, CR 0x8, EC 0x20 redirect
};

// Why `forwards` and `distance` answered as they did: what `rig topo --why` and the data
// path print when peer-to-peer is refused.
struct Route {
    std::string provider, client;
    Verdict verdict = Verdict::Unread;
    std::optional<Distance> distance;
    std::string unread;                 // with Verdict::Unread: which function and why
    std::optional<std::string> common;  // the nearest common upstream node, if any
    bool acs_read = true;               // false: config past 64 bytes was unreadable (no CAP_SYS_ADMIN)
    std::vector<Redirect> redirects;    // every node on either leg, common node included, that redirects
    std::string provider_host_bridge;   // "pci0000:40"
    std::string client_host_bridge;
    bool cpu_rule = false;         // AMD family >= 0x17 allowed it (cpu_supports_p2pdma)
    std::string cpu;               // the boot CPU as /proc/cpuinfo gave it, where the CPU rule was consulted
    std::string host_bridge_rule;  // what the allow-list said, in words, where consulted
    // Every PCI Express link the requests cross (link.hpp): from the provider up to the
    // common node, then down to the client, in that order; without a common node, up to
    // each root port. Two functions of one device cross their shared link twice (up, then
    // down), so it is listed twice. Bridges inside one switch (its upstream port and
    // downstream ports) are joined by no link. Empty for a function with itself and for
    // functions on a root bus (integrated endpoints have no link).
    std::vector<RouteLink> links;
    // The slowest link's status (lowest bytes per second each way), or nullopt where there
    // is no link or some link's status is unknown.
    std::optional<LinkState> bottleneck;
    // bytes_per_second(*bottleneck): what the links let the requests carry each way.
    std::optional<std::uint64_t> bottleneck_bytes_per_second() const;
    // The links of `links` that trained below what both their ends can do.
    std::vector<RouteLink> downtrained() const;
    bool forwards() const { return verdict == Verdict::Direct || verdict == Verdict::ThroughHostBridge; }
    // The whole explanation in a few lines of text, naming bridges and bits.
    std::string explain() const;
};

// A BAR of a function of the machine, as its files show it (sysfs `resource`).
struct BarOf {
    std::string bus;     // the function whose BAR it is
    unsigned index = 0;  // BAR 0..5
    Bar bar;             // where it lies on the bus, and its size
    friend bool operator==(const BarOf&, const BarOf&) = default;
};

class Machine {
public:
    // This computer. Never fails; its functions are read from /sys.
    static Machine local();
    // The sysfs files under `root`: root/sys/bus/pci/devices, root/sys/devices,
    // root/proc/cpuinfo. Nothing can be taken from it.
    static Machine at(std::filesystem::path root);
    // The machine named `name` that `ops` reaches. With `sysfs`, a directory laid out as
    // for at(), routes are read from those files.
    static Machine make(std::string name, std::shared_ptr<Ops> ops, std::optional<std::filesystem::path> sysfs = {});

    // The transport's name ("host:7000"), or nullopt without a transport.
    std::optional<std::string> name() const;
    // Why the machine can no longer be reached, once it cannot; a machine without a
    // transport never fails.
    std::optional<std::string> failed() const;
    // The page size in bytes (from the system for local()).
    std::uint64_t page() const;

    // The functions in bus order (compare_address). Changes nothing on the machine.
    // Without a transport: Ok({}) where there is no /sys/bus/pci; a function whose files
    // cannot be read (as while the kernel removes it) is left out. Error naming the cause
    // where the directory cannot be listed or the transport failed.
    Result<std::vector<Id>> functions() const;

    // Reserves the process's addresses [base, base + bytes) so that only
    // Function::alloc_dma maps there (Linux: a PROT_NONE mapping placed with
    // MAP_FIXED_NOREPLACE). Reserving a range, or part of one, again does nothing for the
    // part held. Error naming the range where part of it is in use by another mapping, or
    // where the system is not Linux. Throws std::invalid_argument if base or bytes is not
    // a multiple of page() or bytes is 0.
    Result<void> reserve(std::uintptr_t base, std::uint64_t bytes) const;

    // Whether the bus carries the requests of `client` to a BAR of `provider`, as Linux's
    // p2pdma decides (docs/p2pdma.md §2). false if either is unread. Where only the first
    // 64 bytes of configuration space can be read, answers as the root complex's rule
    // alone decides. Reads the files live: ACS controls change at run time.
    bool forwards(std::string_view provider, std::string_view client) const;
    // How far apart a and b are, or nullopt if either is unread.
    std::optional<Distance> distance(std::string_view a, std::string_view b) const;
    // Both answers, explained.
    Route route(std::string_view provider, std::string_view client) const;
    // The root complex's rule alone (p2pdma.c's host_bridge_whitelist() and cpu_supports_p2pdma()): what a request meets that
    // reached the root complex whatever the way below did, as one an ACS redirect sent up
    // or one an IOMMU translated to the BAR. Its verdict is ThroughHostBridge,
    // NotSupported, or Unread as route's.
    Route host_bridge_route(std::string_view provider, std::string_view client) const;

    // The function and BAR that decode bus address `address`, read from each function's
    // sysfs `resource` file: nullopt where no BAR does, or the machine has no sysfs files
    // (a transport that sent none). A function whose files cannot be read is passed over.
    // Error naming the directory where the functions cannot be listed.
    Result<std::optional<BarOf>> bar_at(DmaAddress address) const;

    // The claims on this machine's bus addresses (claim.hpp): a driver that registers a
    // BAR's bytes with a device claims them there, and the BAR's owner asks before it
    // gives them back. Shared by every copy of the Machine.
    Claims& claims() const;

    // The root the routes read sysfs files under ("/" for local()), if any.
    const std::optional<std::filesystem::path>& root() const;

    struct State;

private:
    // The transport's operations, or the local VFIO ones; nullptr for at(): what
    // Function::take takes a function through.
    friend class Function;
    const std::shared_ptr<Ops>& ops() const;

    explicit Machine(std::shared_ptr<const State> state) : state_(std::move(state)) {}
    std::shared_ptr<const State> state_;
};

// "switch", "bridge", "system".
std::string_view to_string(Distance d);
// "direct", "through host bridge", "not supported", "unread".
std::string_view to_string(Verdict v);

}  // namespace rig::pci

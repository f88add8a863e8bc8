// rig/sim/topology.hpp: a machine's PCI topology built in code: its CPU, host bridges,
// root ports, switch ports and endpoints (multi-function devices and SR-IOV VFs
// included), each with a real configuration space (header, bus numbers, BARs, the PCI
// Express capability with its port type, the ACS extended capability with its Control
// register) and what sysfs tells of it (NUMA node, driver, IOMMU group, how many config
// bytes a reader gets).
//
// Two things are built from one Topology: a sysfs tree (fixture.hpp: write_sysfs), on
// which Machine::at and Machine::make(name, ops, tree) answer routes as Linux would, and
// a simulated machine (rig::sim), which gives endpoints device models. Both refer to a
// function by the bus address the topology assigned it ("0000:41:00.0").
//
// Building: every add names where the function sits: on a host bridge's root bus, or on
// the secondary bus of a bridge added before. A bridge's secondary bus is the one its
// spec gives or else the lowest free bus number above its own bus (so a tree added depth
// first is numbered as firmware numbers it); its subordinate bus is the highest bus below
// it unless the spec gives one. BARs get bus addresses from one allocator, each aligned to its size.
// Misuse (a device above 0x1f or function above 7, a bus address given twice, a bus
// number used twice, a function added below one that is not a bridge) throws
// std::invalid_argument naming the function. Not thread-safe while being built; const
// use from several threads is safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rig/pci/address.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/link.hpp"
#include "rig/sim/device.hpp"

namespace rig::sim {

// The boot CPU, as /proc/cpuinfo's first processor names it (docs/p2pdma.md §2 step 8
// reads vendor_id and cpu family).
struct Cpu {
    std::string vendor = "GenuineIntel";  // vendor_id: "AuthenticAMD", "HygonGenuine", ...
    unsigned family = 6;                  // cpu family (0x17: Zen, 0x19: Zen 3/4, 0x18: Hygon Dhyana)
    unsigned model = 0;
    std::string model_name = "simulated CPU";

    static Cpu amd(unsigned family = 0x17) { return {"AuthenticAMD", family, 0x31, "AMD EPYC (simulated)"}; }
    static Cpu intel(unsigned model = 0x55) { return {"GenuineIntel", 6, model, "Intel Xeon (simulated)"}; }
    static Cpu hygon() { return {"HygonGenuine", 0x18, 0x02, "Hygon C86 (simulated)"}; }
};

// One PCI function as the topology describes it.
struct Spec {
    std::uint8_t device = 0;    // its device number on its bus, 0..0x1f
    std::uint8_t function = 0;  // 0..7
    std::uint16_t vendor = 0;
    std::uint16_t device_id = 0;
    std::uint32_t class_code = 0;  // 24 bits; 0x0604xx makes it a PCI-to-PCI bridge (type 1 header)
    // The PCI Express capability's Device/Port Type (PCIe 6.0 §7.5.3.2); nullopt:
    // conventional PCI, no PCI Express capability.
    std::optional<pci::config::PortType> port_type;
    // The ACS extended capability (PCIe 6.0 §7.7.8) with this Control register; nullopt:
    // none. 0x001d is SV RR CR UF, as Linux sets it with an IOMMU on.
    std::optional<std::uint16_t> acs_control;
    std::uint16_t acs_capability = 0x007f;  // what the ACS capability implements
    std::array<BarSpec, 6> bars{};          // type 0 headers only; a 64-bit BAR takes index i and i+1
    std::uint16_t subsystem_vendor = 0;
    std::uint16_t subsystem_device = 0;
    int numa_node = -1;                   // sysfs numa_node; -1: none
    std::string driver;                   // the bound driver's name; empty: none
    std::optional<unsigned> iommu_group;  // nullopt: no iommu_group link
    // How many bytes sysfs `config` gives: 64 (a reader without CAP_SYS_ADMIN), 256
    // (conventional PCI) or 4096 (PCI Express); 0: 4096 with a PCI Express capability,
    // else 256.
    unsigned config_bytes = 0;
    // Its PCI Express link (with a port_type; rig/pci/link.hpp): `link` is what it can do
    // (Link Capabilities: Max Link Speed, Maximum Link Width), `trained` what its link
    // runs at (Link Status); nullopt: what both ends can do, the lower speed and width of
    // this function and the root port or downstream port above it. A root port or
    // downstream port reports the status of the function at the lowest device and
    // function below it, and a link that is down (width 0) where there is none. An SR-IOV
    // VF's link registers are reserved (zero), as SR-IOV 1.1 §3.5 has them.
    pci::LinkState link{pci::Generation::Gen4, 16};
    std::optional<pci::LinkState> trained;
    std::optional<std::uint8_t> secondary;    // bridges: the bus below; nullopt: the next free one
    std::optional<std::uint8_t> subordinate;  // bridges: nullopt: the highest bus below it

    bool is_bridge() const { return (class_code >> 8) == 0x0604; }

    // The usual shapes. Each returns a Spec to adjust further.
    // The root complex's own device at 00.0 of a root bus (class 0x060000, host bridge).
    static Spec root_complex(std::uint16_t vendor, std::uint16_t device_id, std::uint32_t class_code = 0x060000);
    static Spec root_port(std::uint8_t device, std::uint8_t function, std::uint16_t vendor, std::uint16_t device_id,
                          std::optional<std::uint16_t> acs_control = std::nullopt);
    static Spec upstream_port(std::uint16_t vendor, std::uint16_t device_id);
    static Spec downstream_port(std::uint8_t device, std::uint16_t vendor, std::uint16_t device_id,
                                std::optional<std::uint16_t> acs_control = std::nullopt);
    // A PCI Express endpoint with one 64-bit prefetchable BAR0 of 16 MiB.
    static Spec endpoint(std::uint8_t device, std::uint8_t function, std::uint16_t vendor, std::uint16_t device_id,
                         std::uint32_t class_code);
};

// Where a host bridge or function sits in its topology (an index into it).
struct HostBridgeRef {
    std::size_t index = 0;
};
struct FunctionRef {
    std::size_t index = 0;
    friend bool operator==(FunctionRef, FunctionRef) = default;
};

class Topology {
public:
    struct HostBridge {
        std::uint32_t domain = 0;
        std::uint8_t bus = 0;  // its root bus
        // Directories between sys/devices and pciDDDD:BB ("LNXSYSTM:00/.../VMBUS:00/<guid>"
        // for Hyper-V); empty: none.
        std::string sysfs_parent;
        std::optional<FunctionRef> vmd;  // an Intel VMD host bridge: the endpoint it is nested under
    };
    struct Function {
        Spec spec;
        pci::BusAddress address;                     // assigned
        std::optional<HostBridgeRef> root_bus;       // set where it sits on a root bus
        std::optional<FunctionRef> upstream;         // the bridge whose secondary bus it sits on
        std::optional<FunctionRef> physfn;           // an SR-IOV VF's PF
        std::array<std::uint64_t, 6> bar_address{};  // bus addresses of its BARs
        HostBridgeRef host_bridge;
    };

    explicit Topology(Cpu cpu = {});

    // A host bridge with root bus `bus` of `domain` (its sysfs directory pciDDDD:BB).
    HostBridgeRef host_bridge(std::uint32_t domain, std::uint8_t bus, std::string sysfs_parent = {});
    // An Intel VMD host bridge nested under the endpoint `vmd` (sysfs:
    // .../0000:00:0e.0/pci10000:e0); domains start at 0x10000.
    HostBridgeRef vmd_host_bridge(FunctionRef vmd, std::uint32_t domain, std::uint8_t bus);

    // A function on the root bus of `host`, or on the secondary bus of bridge `below`.
    FunctionRef add(HostBridgeRef host, Spec spec);
    FunctionRef add(FunctionRef below, Spec spec);
    // An SR-IOV VF of `pf`, on the PF's bus (or on `bus`, a bus number of its own, as VFs
    // past the PF's bus get), with `spec`'s device and function numbers. Its way up is
    // its PF's; sysfs links physfn and the PF's virtfnN.
    FunctionRef add_vf(FunctionRef pf, Spec spec, std::optional<std::uint8_t> bus = std::nullopt);

    const Cpu& cpu() const { return cpu_; }
    const std::vector<HostBridge>& host_bridges() const { return host_bridges_; }
    const std::vector<Function>& functions() const { return functions_; }
    const Function& operator[](FunctionRef f) const { return functions_.at(f.index); }
    const HostBridge& operator[](HostBridgeRef h) const { return host_bridges_.at(h.index); }

    // The assigned bus address, "0000:41:00.0".
    std::string bus(FunctionRef f) const { return (*this)[f].address.to_string(); }
    // The function at a bus address, if any.
    std::optional<FunctionRef> find(std::string_view bus) const;
    // A bridge's subordinate bus: its spec's, else the highest bus number below it.
    std::uint8_t subordinate(FunctionRef bridge) const;
    // Whether another function shares its device (header type bit 7).
    bool multifunction(FunctionRef f) const;
    // The SR-IOV VFs of a PF, in the order added.
    std::vector<FunctionRef> vfs(FunctionRef pf) const;

    // The function's link as its configuration space gives it (Spec::link, trained):
    // LinkSource::Config, or Unread without a PCI Express capability or for a VF.
    pci::Link link(FunctionRef f) const;

    // How the IOMMU groups sysfs shows are made from the Specs' iommu_group numbers.
    enum class Groups {
        // As VFIO sees them (Linux's pci_device_group(), drivers/iommu/iommu.c): walking
        // up from a function, each bridge that does not isolate what is below it joins
        // its group: a root or downstream port without ACS Source Validation, Request
        // Redirect, Completion Redirect and Upstream Forwarding all on (0x001d), a switch
        // upstream port (no ACS applies to it, so the downstream ports below it reach each
        // other), a PCI bridge. The walk stops at the first port that isolates, or at the
        // host bridge. Functions whose walks end at the same node share a group, numbered
        // as the lowest of their Specs' iommu_group. Functions without an iommu_group stay
        // without one. Known gap: Linux also joins the functions of one multifunction
        // device without ACS and DMA aliases (quirks); the simulator does not.
        ByAcs,
        // Each Spec's iommu_group as given: a snapshot's, which the kernel computed.
        AsGiven,
    };
    void set_groups(Groups groups) { groups_ = groups; }
    Groups groups() const { return groups_; }
    // The IOMMU group sysfs shows for the function, by groups(); nullopt: none.
    std::optional<unsigned> iommu_group(FunctionRef f) const;
    // The node whose subtree shares the function's group under Groups::ByAcs: the
    // function itself where the first bridge above it isolates it.
    FunctionRef group_root(FunctionRef f) const;

    // The function's whole configuration space (4096 bytes, before any truncation to
    // spec.config_bytes): type 0 or 1 header, BARs, bus numbers, the PCI Express
    // capability at 0x40 (60 bytes; the list ends there, so 0x80..0xff is free for a
    // device model's capabilities), and the ACS extended capability at 0x100.
    std::vector<std::uint8_t> config_space(FunctionRef f) const;

private:
    FunctionRef place(Spec spec, std::uint32_t domain, std::uint8_t bus, std::optional<HostBridgeRef> root_bus,
                      std::optional<FunctionRef> upstream, std::optional<FunctionRef> physfn, HostBridgeRef host);
    void use_bus(std::uint32_t domain, std::uint8_t bus, std::string_view by);

    Cpu cpu_;
    std::vector<HostBridge> host_bridges_;
    std::vector<Function> functions_;
    std::vector<std::pair<std::uint32_t, std::uint8_t>> buses_;  // (domain, bus) numbers in use
    std::uint64_t next_bar_ = 0x40'0000'0000;                    // the BAR allocator's next free address
    Groups groups_ = Groups::ByAcs;
};

}  // namespace rig::sim

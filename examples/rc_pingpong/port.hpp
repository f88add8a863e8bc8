// The NIC rig_rc_pingpong and rig_perftest run on: a simulated machine of one root port
// and a bnxt NIC model, opened by rig's driver with the port's IPv4 address
// (Options::address), so that its GID table is laid out as rdma_rxe lays out a port's
// (index 0 the link-local GID of the MAC, index 1 the IPv4-mapped GID of the address) and
// -g 1 means on both ends what it means on rxe; its Ethernet port on a datagram cable
// (one frame per UDP datagram: QEMU's -netdev dgram) where one is given. The model
// answers ARP for the address and asks the peer's MAC (resolve).
//
// Closing: the destructor closes the driver's NIC, stops the model, then unplugs the cable.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "options.hpp"
#include "rig/bnxt/gid.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/sim/datagram.hpp"
#include "rig/bnxt/sim/model.hpp"
#include "rig/result.hpp"
#include "rig/sim/system.hpp"

namespace rc_pingpong {

struct Port {
    Port() = default;
    Port(const Port&) = delete;
    Port& operator=(const Port&) = delete;
    ~Port();

    // The MAC of the peer whose GID is `gid`, asked on the cable (ARP for an IPv4-mapped
    // GID: rig::bnxt::sim::Model::resolve). Error naming the address where no answer came
    // within `timeout` or the port has no cable.
    rig::Result<rig::bnxt::Mac> resolve(const rig::bnxt::Gid& gid, std::chrono::milliseconds timeout) const;

    // What the port received and the cable carried, for a failed run's message:
    // "port: delivered 12, arp_requests 1, bad_icrc 2; cable: sent 40, received 15,
    // receive_overflows 0" (the counts that are not zero, and the cable's always).
    std::string counters() const;

    std::shared_ptr<rig::bnxt::sim::Model> model;
    std::optional<rig::sim::System> system;
    std::unique_ptr<rig::bnxt::sim::DatagramCable> cable;
    std::optional<rig::bnxt::Nic> nic;
};

// The port with IPv4 address `ip`, its model running on `cable` (none: an unplugged port) and
// its driver open. Its MAC is 02:00 and the four bytes of `ip`: locally administered and
// unique per address. Error naming the step (the cable's addresses, the
// machine's sysfs tree, Nic::open) that failed.
rig::Result<std::unique_ptr<Port>> open_port(const std::array<std::uint8_t, 4>& ip, const std::optional<Cable>& cable);

// The address a cable's remote host names, numeric ("127.0.0.1:18515", "[::1]:18515"), and
// the local address to bind beside it (the loopback address for a loopback peer, else the
// wildcard of its family). Error naming the host where it does not resolve.
struct CableAddresses {
    std::string local;
    std::string remote;
};
rig::Result<CableAddresses> cable_addresses(const Cable& cable);

}  // namespace rc_pingpong

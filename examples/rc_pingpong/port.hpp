// The NIC rig_rc_pingpong runs on: a simulated machine of one root port and a bnxt NIC
// model, opened by rig's driver, its port's GID table laid out as rdma_rxe lays out a
// port's (index 0 the link-local GID of the MAC, index 1 the IPv4-mapped GID of the port's
// address), so that -g 1 means on both ends what it means on rxe.
//
// Closing: the destructor closes the driver's NIC, then stops the model.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "rig/bnxt/gid.hpp"
#include "rig/bnxt/nic.hpp"
#include "rig/bnxt/sim/nic.hpp"
#include "rig/result.hpp"
#include "rig/sim/system.hpp"

namespace rc_pingpong {

struct Port {
    Port() = default;
    Port(const Port&) = delete;
    Port& operator=(const Port&) = delete;
    ~Port();

    std::shared_ptr<rig::bnxt::sim::Nic> model;
    std::optional<rig::sim::System> system;
    std::optional<rig::bnxt::Nic> nic;
    std::vector<rig::bnxt::GidEntry> gids;
};

// The port with IPv4 address `ip` and MAC `mac`, its model running and its driver open.
// Error naming the step (the machine's sysfs tree, Nic::open) that failed.
rig::Result<std::unique_ptr<Port>> open_port(const std::array<std::uint8_t, 4>& ip, const rig::bnxt::Mac& mac);

}  // namespace rc_pingpong

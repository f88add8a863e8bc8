// rig_rc_pingpong's simulated NIC (port.hpp).
#include "port.hpp"

namespace rc_pingpong {

Port::~Port() {
    if (nic) (void)nic->close();  // its error has no one left to tell
    nic.reset();
    if (model) model->stop();
}

rig::Result<std::unique_ptr<Port>> open_port(const std::array<std::uint8_t, 4>& ip, const rig::bnxt::Mac& mac) {
    auto port = std::make_unique<Port>();
    rig::bnxt::sim::Options model_options;
    model_options.mac = mac;
    port->model = std::make_shared<rig::bnxt::sim::Nic>(model_options);
    // pci0000:00 ── 00:00.0 root complex
    //            └─ 00:01.0 root port ── 01:00.0 the NIC
    rig::sim::Topology t(rig::sim::Cpu::intel(0x8f));
    const auto host = t.host_bridge(0, 0);
    t.add(host, rig::sim::Spec::root_complex(0x8086, 0x09a2));
    const auto root_port = t.add(host, rig::sim::Spec::root_port(1, 0, 0x8086, 0x352a));
    const std::string bus = t.bus(t.add(root_port, rig::sim::endpoint_spec(0, 0, port->model->identity())));
    auto system = rig::sim::System::build("rc_pingpong", std::move(t), {{bus, port->model}});
    if (!system) return rig::fail("the simulated machine: ", system.error());
    port->system = std::move(*system);
    port->model->start();
    port->gids = {{rig::bnxt::link_local_gid(mac), rig::bnxt::RoceVersion::V2},
                  {rig::bnxt::ipv4_gid(ip[0], ip[1], ip[2], ip[3]), rig::bnxt::RoceVersion::V2}};
    rig::bnxt::Options options;
    options.gids = port->gids;
    auto nic = rig::bnxt::Nic::open(port->system->machine(), bus, options);
    if (!nic) return std::unexpected(std::move(nic).error());
    port->nic = std::move(*nic);
    return port;
}

}  // namespace rc_pingpong

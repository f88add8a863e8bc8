// rig_rc_pingpong's simulated NIC (port.hpp).
#include "port.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include "rig/bootstrap/stream.hpp"

namespace rc_pingpong {

Port::~Port() {
    if (nic) (void)nic->close();  // its error has no one left to tell
    nic.reset();
    if (model) model->stop();
    cable.reset();
}

rig::Result<rig::bnxt::Mac> Port::resolve(const rig::bnxt::Gid& gid, std::chrono::milliseconds timeout) const {
    auto mac = model->resolve(gid, timeout);
    if (!mac) return rig::fail("the peer's MAC: ", mac.error());
    return *mac;
}

std::string Port::counters() const {
    const auto rx = model->rx_counters();
    std::string text = "port:";
    const std::pair<const char*, std::uint64_t> fields[] = {{"delivered", rx.delivered},
                                                            {"arp_requests", rx.arp_requests},
                                                            {"neighbor_solicitations", rx.neighbor_solicitations},
                                                            {"neighbor_answers", rx.neighbor_answers},
                                                            {"not_roce", rx.not_roce},
                                                            {"truncated", rx.truncated},
                                                            {"bad_length", rx.bad_length},
                                                            {"bad_ip_checksum", rx.bad_ip_checksum},
                                                            {"bad_udp_port", rx.bad_udp_port},
                                                            {"bad_opcode", rx.bad_opcode},
                                                            {"bad_aeth", rx.bad_aeth},
                                                            {"bad_icrc", rx.bad_icrc},
                                                            {"wrong_mac", rx.wrong_mac},
                                                            {"wrong_address", rx.wrong_address},
                                                            {"unknown_qp", rx.unknown_qp},
                                                            {"unconnected_qp", rx.unconnected_qp},
                                                            {"wrong_source", rx.wrong_source},
                                                            {"wrong_pkey", rx.wrong_pkey}};
    bool first = true;
    for (const auto& [name, value] : fields)
        if (value != 0) {
            text += std::string(first ? " " : ", ") + name + " " + std::to_string(value);
            first = false;
        }
    if (first) text += " nothing received";
    if (cable) {
        const auto c = cable->counters();
        text += "; cable: sent " + std::to_string(c.datagrams_sent) + ", received " +
                std::to_string(c.datagrams_received) + ", receive_overflows " + std::to_string(c.receive_overflows) +
                ", foreign " + std::to_string(c.foreign) + ", not_ethernet " + std::to_string(c.not_ethernet) +
                ", send_failures " + std::to_string(c.send_failures);
    }
    return text;
}

rig::Result<CableAddresses> cable_addresses(const Cable& cable) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(cable.remote.port);
    if (int e = ::getaddrinfo(cable.remote.host.c_str(), port.c_str(), &hints, &found); e != 0 || found == nullptr)
        return rig::fail("--cable: the host ", cable.remote.host, " does not resolve: ", ::gai_strerror(e));
    char text[INET6_ADDRSTRLEN] = "";
    CableAddresses out;
    const std::string local_port = std::to_string(cable.local_port);
    if (found->ai_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(found->ai_addr);
        ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
        out.remote = "[" + std::string(text) + "]:" + port;
        out.local = (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ? "[::1]:" : "[::]:") + local_port;
    } else {
        const auto* a = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
        ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
        out.remote = std::string(text) + ":" + port;
        const bool loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
        out.local = (loopback ? std::string(text) : std::string("0.0.0.0")) + ":" + local_port;
    }
    ::freeaddrinfo(found);
    return out;
}

rig::Result<std::unique_ptr<Port>> open_port(const std::array<std::uint8_t, 4>& ip, const std::optional<Cable>& cable) {
    auto port = std::make_unique<Port>();
    rig::bnxt::sim::ModelOptions model_options;
    model_options.mac = {0x02, 0x00, ip[0], ip[1], ip[2], ip[3]};
    port->model = std::make_shared<rig::bnxt::sim::Model>(model_options);
    if (cable) {
        auto addresses = cable_addresses(*cable);
        if (!addresses) return std::unexpected(std::move(addresses).error());
        auto c = rig::bnxt::sim::DatagramCable::open(*port->model, addresses->local, addresses->remote);
        if (!c) return rig::fail("--cable: ", c.error());
        port->cable = std::move(*c);
    }
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
    rig::bnxt::Options options;
    options.address = std::to_string(ip[0]) + "." + std::to_string(ip[1]) + "." + std::to_string(ip[2]) + "." +
                      std::to_string(ip[3]);  // the GID table {0: link-local, 1: ::ffff:IP}
    auto nic = rig::bnxt::Nic::open(port->system->machine(), bus, options);
    if (!nic) return std::unexpected(std::move(nic).error());
    port->nic = std::move(*nic);
    return port;
}

}  // namespace rc_pingpong

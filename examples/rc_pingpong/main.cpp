// rig_rc_pingpong: rig's driver on a simulated bnxt NIC speaking rdma-core's
// ibv_rc_pingpong protocol (options.hpp lists the command line; pingpong_exchange.hpp the
// TCP exchange). As ibv_rc_pingpong: it posts rx_depth receives, prints its address,
// exchanges addresses with the peer over TCP (the server moves its queue pair to RTR and
// RTS before it answers), prints the peer's.
//
// Not yet: the ping-pong of SENDs itself. It needs the port's datagram cable (--cable) and
// the resolution of the peer's IPv4 address to its MAC, since ibv_rc_pingpong's record
// carries no MAC; until they exist this program stops after the exchange with exit
// status 1 and says so.
//
// Exit status: 1 on any failure, as ibv_rc_pingpong; 0 for --help.
#include <arpa/inet.h>

#include <cstdio>
#include <iostream>

#include "options.hpp"
#include "pingpong_exchange.hpp"
#include "port.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/bootstrap/stream.hpp"

namespace {

using namespace rc_pingpong;
using namespace std::chrono_literals;

constexpr std::uint64_t recv_wrid = 1;  // PINGPONG_RECV_WRID
// rc_pingpong blocks without a bound; these only keep a vanished peer from hanging it.
constexpr auto accept_timeout = std::chrono::hours(24);
constexpr auto exchange_timeout = std::chrono::seconds(60);

std::string gid_text(const rig::bnxt::Gid& gid) {
    char text[INET6_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET6, gid.data(), text, sizeof text);
    return text;
}

void print(const char* which, const pingpong::Dest& d) {
    std::printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", which, d.lid, d.qpn, d.psn, gid_text(d.gid).c_str());
    std::fflush(stdout);
}

// What this side needs of the peer's record before it connects: a GID, since a RoCE queue
// pair cannot connect without a GRH (ibv_rc_pingpong leaves it out for the all-zero GID of
// a peer run without -g).
rig::Result<void> usable(const pingpong::Dest& peer) {
    const rig::bnxt::Gid zero{};
    if (peer.gid == zero) return rig::fail("the peer sent the all-zero GID (ibv_rc_pingpong without -g); RoCE needs its GID: run it with -g");
    return {};
}

int run(int argc, char** argv) {
    bool help = false;
    auto options = parse(argc, argv, &help);
    if (!options) {
        if (help) {
            std::cout << options.error();
            return 0;
        }
        std::cerr << "rig_rc_pingpong: " << options.error() << "\n" << usage(argv[0]);
        return 1;
    }
    const Options& o = *options;
    // 02:00 and the port's IPv4 address: a locally administered MAC unique per address.
    const rig::bnxt::Mac mac{0x02, 0x00, o.ip[0], o.ip[1], o.ip[2], o.ip[3]};
    auto port = open_port(o.ip, mac);
    if (!port) {
        std::cerr << "rig_rc_pingpong: " << port.error() << "\n";
        return 1;
    }
    const rig::bnxt::Nic& nic = *(*port)->nic;
    auto cq = rig::bnxt::Cq::create(nic, o.rx_depth + 1);
    if (!cq) {
        std::cerr << "rig_rc_pingpong: " << cq.error() << "\n";
        return 1;
    }
    auto qp = rig::bnxt::Qp::create(nic, *cq, *cq, {1, o.rx_depth});
    if (!qp) {
        std::cerr << "rig_rc_pingpong: " << qp.error() << "\n";
        return 1;
    }
    auto region = rig::bnxt::Region::host(nic, o.size);
    if (!region) {
        std::cerr << "rig_rc_pingpong: " << region.error() << "\n";
        return 1;
    }
    for (std::uint32_t i = 0; i < o.rx_depth; ++i)
        if (!qp->recv(*region, 0, o.size, recv_wrid)) {
            std::cerr << "Couldn't post receive (" << i << ")\n";
            return 1;
        }
    pingpong::Dest mine{0, qp->qpn(), qp->endpoint().psn, {}};
    if (o.gid_index >= 0) {
        if (static_cast<std::size_t>(o.gid_index) >= (*port)->gids.size()) {
            std::cerr << "can't read sgid of index " << o.gid_index << "\n";
            return 1;
        }
        mine.gid = (*port)->gids[static_cast<std::size_t>(o.gid_index)].gid;
    }
    print("local address: ", mine);

    rig::Result<pingpong::Dest> peer = rig::fail("no exchange");
    if (o.server) {
        auto stream = rig::bootstrap::Stream::connect({*o.server, o.port}, exchange_timeout);
        if (!stream) {
            std::cerr << "rig_rc_pingpong: " << stream.error() << "\n";
            return 1;
        }
        peer = pingpong::client_exchange(*stream, mine, exchange_timeout);
        if (peer) {
            if (auto u = usable(*peer); !u) peer = rig::fail(stream->peer(), ": ", u.error());
        }
    } else {
        auto listener = rig::bootstrap::Listener::listen({"", o.port});
        if (!listener) {
            std::cerr << "rig_rc_pingpong: " << listener.error() << "\n";
            return 1;
        }
        auto stream = listener->accept(accept_timeout);
        if (!stream) {
            std::cerr << "rig_rc_pingpong: " << stream.error() << "\n";
            return 1;
        }
        const std::string at = stream->peer();
        peer = pingpong::server_exchange(
            *stream, mine,
            [&](const pingpong::Dest& d) -> rig::Result<void> {
                if (auto u = usable(d); !u) return rig::fail(at, ": ", u.error());
                return {};
            },
            exchange_timeout);
    }
    if (!peer) {
        std::cerr << "rig_rc_pingpong: " << peer.error() << "\n";
        return 1;
    }
    print("remote address:", *peer);
    std::cerr << "rig_rc_pingpong: stopping after the exchange: the ping-pong of SENDs needs the port's datagram cable "
                 "and the resolution of the peer's MAC, which this build does not have yet\n";
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "rig_rc_pingpong: " << e.what() << "\n";
        return 1;
    }
}

// rig_rc_pingpong: rig's driver on a simulated bnxt NIC speaking rdma-core's
// ibv_rc_pingpong protocol (options.hpp lists the command line; pingpong_exchange.hpp the
// TCP exchange; pingpong.hpp the ping-pong of SENDs). As ibv_rc_pingpong: it posts
// rx_depth receives, prints its address, exchanges addresses with the peer over TCP (the
// server moves its queue pair to RTR and RTS before it answers, the client after the
// exchange), prints the peer's, runs the ping-pong and prints its two closing lines.
//
// The queue pair is set up as pp_connect_ctx sets it: the peer's QPN and PSN, path MTU
// -m, source GID index -g, hop limit 1, max_dest_rd_atomic 1 and min_rnr_timer 12 at
// RTR; timeout 14, retry_cnt 7, rnr_retry 7 and max_rd_atomic 1 at RTS. The record
// carries no MAC: the port asks the peer's by ARP (Port::resolve) before RTR, where rxe
// asks it too.
//
// Exit status: 1 on any failure, as ibv_rc_pingpong; 0 for --help.
#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include "options.hpp"
#include "pingpong.hpp"
#include "pingpong_exchange.hpp"
#include "port.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/bootstrap/stream.hpp"

namespace {

using namespace rc_pingpong;
using namespace std::chrono_literals;

// rc_pingpong blocks without a bound; these only keep a vanished peer from hanging it.
constexpr auto accept_timeout = std::chrono::hours(24);
constexpr auto exchange_timeout = std::chrono::seconds(60);
constexpr auto resolve_timeout = std::chrono::milliseconds(3000);  // Linux's ARP: 3 probes, 1 s apart

// pp_connect_ctx's attributes.
constexpr rig::bnxt::Retries retries{14, 7, 7};

std::string gid_text(const rig::bnxt::Gid& gid) {
    char text[INET6_ADDRSTRLEN] = "";
    ::inet_ntop(AF_INET6, gid.data(), text, sizeof text);
    return text;
}

void print(const char* which, const pingpong::Dest& d) {
    std::printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", which, d.lid, d.qpn, d.psn,
                gid_text(d.gid).c_str());
    std::fflush(stdout);
}

// What this side needs of the peer's record before it connects: a GID, since a RoCE queue
// pair cannot connect without a GRH (ibv_rc_pingpong leaves it out for the all-zero GID of
// a peer run without -g).
rig::Result<void> usable(const pingpong::Dest& peer) {
    const rig::bnxt::Gid zero{};
    if (peer.gid == zero)
        return rig::fail(
            "the peer sent the all-zero GID (ibv_rc_pingpong without -g); RoCE needs its GID: run it with -g");
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
    auto port = open_port(o.ip, o.cable);
    if (!port) {
        std::cerr << "rig_rc_pingpong: " << port.error() << "\n";
        return 1;
    }
    const rig::bnxt::Nic& nic = *(*port)->nic;
    auto cq = rig::bnxt::Cq::create(nic, o.rx_depth + 1);
    if (!cq) {
        std::cerr << "Couldn't create CQ: " << cq.error() << "\n";
        return 1;
    }
    auto qp = rig::bnxt::Qp::create(nic, *cq, *cq, {1, o.rx_depth});
    if (!qp) {
        std::cerr << "Couldn't create QP: " << qp.error() << "\n";
        return 1;
    }
    auto region = rig::bnxt::Region::host(nic, std::max<std::uint32_t>(o.size, 1));
    if (!region) {
        std::cerr << "Couldn't register MR: " << region.error() << "\n";
        return 1;
    }
    region->write(0, std::vector<std::byte>(o.size, std::byte{0x7b}));  // rc_pingpong's memset(buf, 0x7b, size)
    if (const std::uint32_t routs = post_receives(*qp, *region, o.size, o.rx_depth); routs < o.rx_depth) {
        std::cerr << "Couldn't post receive (" << routs << ")\n";
        return 1;
    }
    pingpong::Dest mine{0, qp->qpn(), qp->endpoint().psn, {}};
    rig::bnxt::Path path;
    path.hop_limit = 1;
    path.max_rd_atomic = 1;
    path.max_dest_rd_atomic = 1;
    if (o.gid_index >= 0) {
        if (static_cast<std::size_t>(o.gid_index) >= nic.gids().size()) {
            std::cerr << "can't read sgid of index " << o.gid_index << "\n";
            return 1;
        }
        mine.gid = nic.gids()[static_cast<std::size_t>(o.gid_index)].gid;
        path.gid_index = static_cast<std::size_t>(o.gid_index);
    }
    print("local address: ", mine);

    // pp_connect_ctx: the peer's MAC first (rxe ARPs here), then RTR and RTS.
    const auto connect = [&](const pingpong::Dest& peer) -> rig::Result<void> {
        auto peer_mac = (*port)->resolve(peer.gid, resolve_timeout);
        if (!peer_mac) return rig::fail("Failed to modify QP to RTR: ", peer_mac.error());
        // The exchange carries no port MTU: the path MTU is -m (pp_connect_ctx's attr.path_mtu).
        const rig::bnxt::Endpoint endpoint{peer.qpn, peer.psn, peer.gid, *peer_mac, rig::bnxt::Mtu::Mtu4096};
        path.mtu = o.mtu;
        if (auto r = qp->connect(endpoint, retries, path); !r)
            return rig::fail("Failed to modify QP to RTR/RTS: ", r.error());
        return {};
    };

    rig::Result<pingpong::Dest> peer = rig::fail("no exchange");
    if (o.server) {
        auto stream = rig::bootstrap::Stream::connect({*o.server, o.port}, exchange_timeout);
        if (!stream) {
            std::cerr << "Couldn't connect to " << *o.server << ":" << o.port << ": " << stream.error() << "\n";
            return 1;
        }
        peer = pingpong::client_exchange(*stream, mine, exchange_timeout);
        if (peer) {
            if (auto u = usable(*peer); !u) peer = rig::fail(stream->peer(), ": ", u.error());
        }
    } else {
        auto listener = rig::bootstrap::Listener::listen({"", o.port});
        if (!listener) {
            std::cerr << "Couldn't listen to port " << o.port << ": " << listener.error() << "\n";
            return 1;
        }
        auto stream = listener->accept(accept_timeout);
        if (!stream) {
            std::cerr << "accept() failed: " << stream.error() << "\n";
            return 1;
        }
        const std::string at = stream->peer();
        peer = pingpong::server_exchange(
            *stream, mine,
            [&](const pingpong::Dest& d) -> rig::Result<void> {
                if (auto u = usable(d); !u) return rig::fail(at, ": ", u.error());
                return connect(d);
            },
            exchange_timeout);
    }
    if (!peer) {
        std::cerr << "rig_rc_pingpong: " << peer.error() << "\n";
        return 1;
    }
    print("remote address:", *peer);
    if (o.server) {
        if (auto r = connect(*peer); !r) {
            std::cerr << r.error() << "\n";
            return 1;
        }
    }

    Loop loop;
    loop.size = o.size;
    loop.iters = o.iters;
    loop.rx_depth = o.rx_depth;
    loop.role = o.server ? Role::Client : Role::Server;
    loop.max_inline = nic.limits().max_inline_data;
    auto usec = ping_pong(*qp, *cq, *region, loop);
    if (!usec) {
        std::cerr << usec.error() << "\n" << (*port)->counters() << "\n";
        return 1;
    }
    std::cout << report(o.size, o.iters, *usec) << std::flush;
    if (auto r = qp->destroy(); !r) {
        std::cerr << "Couldn't destroy QP: " << r.error() << "\n";
        return 1;
    }
    if (auto r = cq->destroy(); !r) {
        std::cerr << "Couldn't destroy CQ: " << r.error() << "\n";
        return 1;
    }
    if (auto r = region->deregister(); !r) {
        std::cerr << "Couldn't deregister MR: " << r.error() << "\n";
        return 1;
    }
    if (auto r = (*port)->nic->close(); !r) {
        std::cerr << "Couldn't release context: " << r.error() << "\n";
        return 1;
    }
    return 0;
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

// rig_perftest: rig's driver on a simulated bnxt NIC speaking perftest's ib_send_bw and
// ib_read_bw (RC, one queue pair, the default TCP exchange on port 18515, no rdma_cm):
// perftest_options.hpp is the command line, perftest_exchange.hpp the exchange,
// perftest_run.hpp the data phase. So an ib_read_bw on Linux's rxe reads a rig region
// (rig_perftest ib_read_bw as the server) and rig's Qp::post of a Read reads an rxe region (as the
// client); ib_send_bw likewise both ways.
//
// The queue pair is set up as perftest_resources.c ctx_modify_qp_to_rtr / _rts sets it:
// the peer's QPN and PSN, the agreed MTU, the source GID index -x, hop limit 0xFF,
// max_dest_rd_atomic = this side's out_reads, min_rnr_timer 12 at RTR; timeout 14,
// retry_cnt 7, rnr_retry 7, max_rd_atomic = the peer's out_reads (at most this queue
// pair's initiator depth) at RTS. out_reads is 1 for ib_send_bw and the queue pair's
// responder depth for ib_read_bw (ctx_set_out_reads: the device's max_qp_rd_atom). The
// buffer is 2 x max(size, cycle buffer) bytes; the record's vaddr is its second half.
//
// Exit status: 1 on any failure, 0 for --help.
#include <algorithm>
#include <iostream>

#include "perftest_exchange.hpp"
#include "perftest_options.hpp"
#include "perftest_run.hpp"
#include "port.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/bnxt/qp.hpp"
#include "rig/bnxt/region.hpp"
#include "rig/bootstrap/stream.hpp"

namespace {

using rc_pingpong::open_port;
using namespace rc_pingpong::perftest;

// perftest blocks without bounds; these keep a vanished peer from hanging this side. A
// message of the exchange may wait for the peer's whole data phase (the ib_read_bw
// server's record after the client's reads).
constexpr auto accept_timeout = std::chrono::hours(24);
constexpr auto exchange_timeout = std::chrono::minutes(15);
constexpr auto resolve_timeout = std::chrono::milliseconds(3000);
constexpr std::uint8_t hop_limit = 0xFF;  // ctx_modify_qp_to_rtr: ah_attr.grh.hop_limit
constexpr rig::bnxt::Retries retries{14, 7, 7};

int fail(const std::string& message) {
    std::cerr << "rig_perftest: " << message << "\n";
    return 1;
}

int run(int argc, char** argv) {
    bool help = false;
    auto options = parse(argc, argv, &help);
    if (!options) {
        if (help) {
            std::cout << options.error();
            return 0;
        }
        std::cerr << "rig_perftest: " << options.error() << "\n" << usage(argv[0]);
        return 1;
    }
    const Options& o = *options;
    auto port = open_port(o.ip, o.cable);
    if (!port) return fail(port.error());
    const rig::bnxt::Nic& nic = *(*port)->nic;
    if (o.gid_index >= nic.gids().size()) return fail("Couldn't read GID of index " + std::to_string(o.gid_index));
    auto cq = rig::bnxt::Cq::create(nic, tx_depth + rx_depth);
    if (!cq) return fail("Couldn't create CQ: " + cq.error());
    auto qp = rig::bnxt::Qp::create(nic, *cq, *cq, {tx_depth, rx_depth});
    if (!qp) return fail("Couldn't create QP: " + qp.error());

    std::optional<rig::bootstrap::Stream> stream;
    if (o.server) {
        auto s = rig::bootstrap::Stream::connect({*o.server, o.port}, std::chrono::seconds(60));
        if (!s) return fail("Couldn't connect to " + *o.server + ":" + std::to_string(o.port) + ": " + s.error());
        stream = std::move(*s);
    } else {
        auto listener = rig::bootstrap::Listener::listen({"", o.port});
        if (!listener) return fail("Couldn't listen to port " + std::to_string(o.port) + ": " + listener.error());
        auto s = listener->accept(accept_timeout);
        if (!s) return fail("accept() failed: " + s.error());
        stream = std::move(*s);
    }
    const Side side = o.server ? Side::Client : Side::Server;
    Session session(*stream, side, exchange_timeout);
    Transfer transfer;
    transfer.size = o.size;
    transfer.iters = o.iters;
    std::optional<rig::bnxt::Region> buffer;
    std::uint32_t posted = 0;

    const auto record = [&](const Session::Agreed& a) -> rig::Result<QpRecord> {
        const std::uint64_t half = std::max<std::uint64_t>(o.size, a.sys.cycle_buffer);  // BUFF_SIZE
        auto r = rig::bnxt::Region::host(nic, 2 * half);
        if (!r) return rig::fail("Couldn't allocate MR: ", r.error());
        buffer = std::move(*r);
        QpRecord mine;
        mine.out_reads = o.program == Program::ReadBw ? qp->read_depths().responder : 1;
        mine.qpn = qp->qpn();
        mine.psn = qp->endpoint().psn;
        mine.rkey = buffer->rkey();
        mine.vaddr = buffer->address() + half;
        mine.gid = nic.gids()[o.gid_index].gid;
        return mine;
    };
    const auto connect = [&](const Session::Agreed& a) -> rig::Result<void> {
        auto peer_mac = (*port)->resolve(a.remote.gid, resolve_timeout);
        if (!peer_mac) return rig::fail("Failed to modify QP to RTR: ", peer_mac.error());
        rig::bnxt::Path path;
        path.gid_index = o.gid_index;
        path.hop_limit = hop_limit;
        path.max_dest_rd_atomic = static_cast<std::uint8_t>(a.mine.out_reads);
        path.max_rd_atomic =
            static_cast<std::uint8_t>(std::clamp<std::uint32_t>(a.remote.out_reads, 1, qp->read_depths().initiator));
        path.mtu = a.mtu;  // ctx_modify_qp_to_rtr's attr.path_mtu; the exchange carries no port MTU
        const rig::bnxt::Endpoint peer{a.remote.qpn, a.remote.psn, a.remote.gid, *peer_mac, rig::bnxt::Mtu::Mtu4096};
        if (auto r = qp->connect(peer, retries, path); !r)
            return rig::fail("Failed to modify QP to RTR/RTS: ", r.error());
        return {};
    };
    const auto prepare = [&]() -> rig::Result<void> {
        if (side == Side::Server && !post_receives(*qp, *buffer, transfer, posted))
            return rig::fail("Couldn't post recv: Qp=0 rcnt=", std::to_string(posted));
        return {};
    };
    auto agreed = session.setup(o.program, SysData{}, o.mtu, record, connect, prepare);
    if (!agreed) return fail(agreed.error());
    std::cout << address_lines("local", o.program, agreed->mine) << address_lines("remote", o.program, agreed->remote)
              << std::flush;

    BwReport mine{};
    rig::Result<double> usec = 0.0;
    if (o.program == Program::SendBw)
        usec = side == Side::Client ? send_all(*qp, *cq, *buffer, transfer)
                                    : receive_all(*qp, *cq, *buffer, transfer, posted);
    else if (side == Side::Client)
        usec = read_all(*qp, *cq, *buffer, rig::bnxt::Remote{agreed->remote.vaddr, agreed->remote.rkey}, transfer);
    if (!usec) return fail(usec.error() + "\n" + (*port)->counters());
    if (o.program == Program::SendBw || side == Side::Client) mine = report(transfer, *usec);
    auto theirs = session.finish(o.program, agreed->mine, mine);
    if (!theirs) return fail(theirs.error());
    // read_bw.c: the server prints the client's report (xchg_bw_reports).
    std::cout << result_lines(o.program == Program::ReadBw && side == Side::Server ? *theirs : mine) << std::flush;
    if (auto r = qp->destroy(); !r) return fail("Couldn't destroy QP: " + r.error());
    if (auto r = buffer->deregister(); !r) return fail("Couldn't deregister MR: " + r.error());
    if (auto r = cq->destroy(); !r) return fail("Couldn't destroy CQ: " + r.error());
    if (auto r = (*port)->nic->close(); !r) return fail("Couldn't close the device: " + r.error());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "rig_perftest: " << e.what() << "\n";
        return 1;
    }
}

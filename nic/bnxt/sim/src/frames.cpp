// A QP's frames out and the port's checks of the frames in (packet.hpp for the format).
//
// Out: a packet gets the QP's address vector (MODIFY_QP INIT->RTR: destination MAC,
// source GID by its index and that GID's MAC (ADD_GID src_mac) as the source MAC,
// destination GID, hop limit, traffic class, flow label), the
// framing of its network type (0 RoCEv1, 2 RoCEv2/IPv4, 3 RoCEv2/IPv6; the reserved value
// 1 frames as RoCEv1), the UDP source port of udp_source_port, and its ICRC once the
// payload is in (seal).
//
// In: a RoCE frame reaches its QP only if, in this order (each failure dropped and counted
// in its RxCounters field, and in testing::Counters::frames_dropped):
//   1. it is well-formed (decode: truncated, bad_length, bad_ip_checksum, bad_udp_port,
//      bad_icrc, bad_opcode, bad_aeth, not_roce);
//   2. its destination MAC is the port's (ModelOptions::mac) or a GID's (wrong_mac);
//   3. its destination address (IPv4 address or GID) is one of the port's GIDs
//      (wrong_address);
//   4. a QP of its destination QP number exists (unknown_qp) and is in RTR or RTS
//      (unconnected_qp);
//   5. its source address is the QP's destination GID (wrong_source): a packet from
//      another host than the QP's peer;
//   6. it carries the QP's P_Key (wrong_pkey).
// Well-formedness goes first, as a NIC checks the ICRC before it trusts a header field.
// Gap to the hardware: a real port hands what is not RoCE (and RoCE for an address that
// is not its) to the L2 driver sharing it; the model has none and drops it.
#include <algorithm>

#include "firmware.hpp"

namespace rig::bnxt::sim::detail {

namespace {

Network network_of(const Qp& qp) {
    switch (qp.network_type) {
    case static_cast<std::uint8_t>(Network::ROCE_V2_IPV4): return Network::ROCE_V2_IPV4;
    case static_cast<std::uint8_t>(Network::ROCE_V2_IPV6): return Network::ROCE_V2_IPV6;
    default: return Network::ROCE_V1;
    }
}

}  // namespace

std::span<std::byte> Firmware::frame_for(const Qp& qp, Packet& p, std::size_t payload_bytes, Frame& frame) {
    p.network = network_of(qp);
    p.dst_mac = qp.dest_mac;
    p.src_mac = options_.mac;
    if (qp.sgid_index < gids_.size() && gids_[qp.sgid_index]) {
        p.sgid = gids_[qp.sgid_index]->gid;
        p.src_mac = gids_[qp.sgid_index]->mac;  // ADD_GID's: the MAC of the interface of the address
    }
    p.dgid = qp.dgid;
    p.hop_limit = qp.hop_limit;
    p.traffic_class = qp.traffic_class;
    p.flow_label = qp.flow_label;
    p.src_port = udp_source_port(qp.flow_label, qp.qpn, qp.dest_qp);
    p.pkey = qp.pkey;
    p.dest_qp = qp.dest_qp;
    return encode(p, payload_bytes, frame);
}

void Firmware::transmit(const Qp& qp, Frame frame) {
    seal(frame);
    // A QP connected to a QP of this port (loopback, §7.2) never reaches the wire.
    transmitter_.send(std::move(frame), qp.dest_mac == options_.mac ? Transmitter::To::self : Transmitter::To::wire);
}

void Firmware::transmit(const Qp& qp, Packet p) {
    Frame frame = transmitter_.frame();
    frame_for(qp, p, 0, frame);
    transmit(qp, std::move(frame));
}

void Firmware::drop(std::uint64_t RxCounters::*reason) {
    ++(rx_.*reason);
    ++counters_.frames_dropped;
}

Qp* Firmware::accept(const std::expected<Packet, Malformed>& p) {
    if (!p) {
        switch (p.error()) {
        case Malformed::not_roce: drop(&RxCounters::not_roce); break;
        case Malformed::truncated: drop(&RxCounters::truncated); break;
        case Malformed::length: drop(&RxCounters::bad_length); break;
        case Malformed::ip_checksum:
        case Malformed::udp_checksum: drop(&RxCounters::bad_ip_checksum); break;
        case Malformed::udp_port: drop(&RxCounters::bad_udp_port); break;
        case Malformed::opcode: drop(&RxCounters::bad_opcode); break;
        case Malformed::aeth: drop(&RxCounters::bad_aeth); break;
        case Malformed::icrc: drop(&RxCounters::bad_icrc); break;
        }
        return nullptr;
    }
    if (p->dst_mac != options_.mac &&
        std::none_of(gids_.begin(), gids_.end(), [&](const auto& g) { return g && g->mac == p->dst_mac; })) {
        drop(&RxCounters::wrong_mac);
        return nullptr;
    }
    const bool ours = std::any_of(gids_.begin(), gids_.end(), [&](const auto& g) { return g && g->gid == p->dgid; });
    if (!ours) {
        drop(&RxCounters::wrong_address);
        return nullptr;
    }
    Qp* qp = find_qp(p->dest_qp);
    if (!qp) {
        drop(&RxCounters::unknown_qp);
        return nullptr;
    }
    if (qp->state != hsi::QpState::RTR && qp->state != hsi::QpState::RTS) {
        drop(&RxCounters::unconnected_qp);
        return nullptr;
    }
    if (p->sgid != qp->dgid) {
        drop(&RxCounters::wrong_source);
        return nullptr;
    }
    if (p->pkey != qp->pkey) {
        drop(&RxCounters::wrong_pkey);
        return nullptr;
    }
    ++rx_.delivered;
    return qp;
}

}  // namespace rig::bnxt::sim::detail

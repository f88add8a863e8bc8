// Inbound packets and the responder side of an RC QP (docs/hsi.md §5.7.1 step 3;
// IBA vol. 1 §9.7).
//
// A frame reaches a QP only through the port's checks (frames.cpp: well-formed, ICRC, for
// this port's MAC and addresses, for a connected QP, from its peer, with its P_Key).
// Acknowledgements and read responses go to the requester (RTS only); requests to the
// responder (RTR or RTS; other states drop them). The responder takes requests in PSN
// order (IBA 9.7.5.1): a PSN ahead of the expected one is dropped, and the first of them
// after the expected PSN last came gets one NAK PSN sequence error (one per gap); a PSN
// behind it is a duplicate, never executed again: a run of duplicates (a requester's
// go-back) is acknowledged at its first packet and at each that asks for an ACK (AckReq),
// through the last PSN taken; a duplicate READ is answered
// again from memory from the PSN it names where it falls inside the record of one of the
// last max_dest_rd_atomic READs taken, else dropped (Linux rxe_resp.c duplicate_request).
// A request at the expected PSN is then checked as rxe checks it: its opcode continues the
// message in progress (in_sequence; IBA 9.7.5.1, rxe check_op_seq), it is one the model
// executes (not an atomic, not a SEND with invalidate; rxe check_op_valid), its payload and
// DMA length fit the path MTU and 2^31 (length_ok, checked once a SEND has its receive;
// rxe check_length). One that fails is a class C error (IBA 9.9.3): NAK Invalid Request,
// the receive being filled completed with REMOTE_INVALID_REQUEST_ERR, the QP to ERR. ACKs
// are coalesced: one on AckReq, at the end of each message, and at least every
// ModelOptions::ack_every packets of a message whose requester asks for none.
//
// SEND (§5.7.1): the first packet takes the next RQ WQE; with none posted the responder
// answers an RNR NAK carrying its min_rnr_timer and drops the rest of the message. Bytes
// go through the WQE's SGEs (LOCAL_WRITE needed); the last packet writes a RES_RC CQE
// (length, immediate, IMM flag, wr_id tag) before the acknowledgement, so a requester's
// CQE always follows its peer's (§5.7.2). A message longer than the WQE: LOCAL_LENGTH_ERR
// CQE and an INVALID_REQUEST NAK; a bad SGE or a bus fault on the receive buffer:
// LOCAL_PROTECTION_ERR CQE and a REMOTE_OPERATIONAL_ERROR NAK [UNCERTAIN: for the bus
// fault]; a malformed RQ WQE: LOCAL_QP_OPERATION_ERR. RDMA WRITE and READ check the R_Key
// (mr.cpp); a violation NAKs REMOTE_ACCESS_ERROR with no responder CQE. A READ with no
// responder depth (max_dest_rd_atomic < 4) NAKs INVALID_REQUEST. After any of these the
// responder QP enters ERR with a QP error notification carrying its reason (§4.5.4).
#include <algorithm>

#include "firmware.hpp"

namespace rig::bnxt::sim::detail {

using hsi::CqeResStatus;
using hsi::ResErrStateReason;

namespace {

bool opcode_in(RcOpcode op, std::initializer_list<RcOpcode> set) {
    return std::find(set.begin(), set.end(), op) != set.end();
}

// IBA 9.7.5.1.x (Linux rxe_resp.c, check_op_seq): inside a SEND only SEND MIDDLE or LAST
// may come, inside an RDMA WRITE only WRITE MIDDLE or LAST, and outside both no MIDDLE or
// LAST. Anything else is an invalid request (rxe: RESPST_ERR_MISSING_OPCODE_LAST_C or
// _FIRST, class C).
bool in_sequence(const Qp& qp, RcOpcode op) {
    using enum RcOpcode;
    if (qp.receive.active)
        return opcode_in(op, {SEND_MIDDLE, SEND_LAST, SEND_LAST_WITH_IMMEDIATE, SEND_LAST_WITH_INVALIDATE});
    if (qp.write.active) return opcode_in(op, {RDMA_WRITE_MIDDLE, RDMA_WRITE_LAST, RDMA_WRITE_LAST_WITH_IMMEDIATE});
    return !opcode_in(op, {SEND_MIDDLE, SEND_LAST, SEND_LAST_WITH_IMMEDIATE, SEND_LAST_WITH_INVALIDATE,
                           RDMA_WRITE_MIDDLE, RDMA_WRITE_LAST, RDMA_WRITE_LAST_WITH_IMMEDIATE});
}

// Requests of Table 38 the model does not execute (packet.hpp is_rc_opcode): refused as
// rxe's check_op_valid refuses an operation the QP does not allow
// (RESPST_ERR_UNSUPPORTED_OPCODE, class C).
bool unsupported(RcOpcode op) {
    using enum RcOpcode;
    return opcode_in(op, {COMPARE_SWAP, FETCH_ADD, SEND_LAST_WITH_INVALIDATE, SEND_ONLY_WITH_INVALIDATE});
}

// Linux rxe_resp.c, check_length: FIRST and MIDDLE carry exactly the path MTU, LAST 1 to
// MTU bytes, ONLY (and a READ request) 0 to MTU; a RETH's DMA length is at most 2^31, IB's
// longest message (the requester's limit too). A request that breaks one is a class C
// error (IBA 9.9.3; rxe: RESPST_ERR_LENGTH).
bool length_ok(const Packet& p, std::uint32_t mtu) {
    using enum RcOpcode;
    constexpr std::uint64_t max_dma_length = std::uint64_t{1} << 31;
    const std::size_t n = p.payload.size();
    if (p.reth && p.reth->length > max_dma_length) return false;
    if (opcode_in(p.opcode, {SEND_FIRST, SEND_MIDDLE, RDMA_WRITE_FIRST, RDMA_WRITE_MIDDLE})) return n == mtu;
    if (opcode_in(p.opcode, {SEND_LAST, SEND_LAST_WITH_IMMEDIATE, RDMA_WRITE_LAST, RDMA_WRITE_LAST_WITH_IMMEDIATE}))
        return n >= 1 && n <= mtu;
    return n <= mtu;
}

}  // namespace

void Firmware::handle(Event& event) {
    switch (event.kind) {
    case Event::Kind::hwrm: hwrm(std::move(event.bytes)); break;
    case Event::Kind::cmdq_init: cmdq_init(event.bytes); break;
    case Event::Kind::cmdq_trigger: cmdq_trigger(static_cast<std::uint32_t>(event.value)); break;
    case Event::Kind::doorbell: doorbell(event.value, event.offset); break;
    case Event::Kind::frame: frame(event.frame); break;
    }
}

void Firmware::frame(std::span<std::byte> bytes) {
    if (neighbour(bytes)) return;  // ARP and ICMPv6: the port's own (neighbour.cpp)
    auto p = decode(bytes);
    Qp* qp = accept(p);  // the port's checks (frames.cpp)
    if (!qp) return;
    switch (p->opcode) {
    case RcOpcode::ACKNOWLEDGE:
        if (qp->state == hsi::QpState::RTS) on_ack(*qp, *p);
        else ++counters_.frames_dropped;
        return;
    case RcOpcode::RDMA_READ_RESPONSE_FIRST:
    case RcOpcode::RDMA_READ_RESPONSE_MIDDLE:
    case RcOpcode::RDMA_READ_RESPONSE_LAST:
    case RcOpcode::RDMA_READ_RESPONSE_ONLY:
        if (qp->state == hsi::QpState::RTS) on_read_response(*qp, *p);
        else ++counters_.frames_dropped;
        return;
    case RcOpcode::ATOMIC_ACKNOWLEDGE:
        // The answer to an atomic, which this QP never sends: a response to nothing asked.
        ++counters_.frames_dropped;
        return;
    default: respond(*qp, *p); return;
    }
}

void Firmware::respond(Qp& qp, Packet& p) {
    if (qp.state != hsi::QpState::RTR && qp.state != hsi::QpState::RTS) {
        ++counters_.frames_dropped;
        return;
    }
    const std::int32_t d = psn_diff(p.psn, qp.epsn);
    if (d > 0) {
        // IBA 9.7.5.1.2: one NAK per gap, then silence until the expected PSN comes again.
        ++counters_.out_of_sequence;
        if (!qp.nak_sent) {
            send_ack(qp, qp.epsn, AethKind::NAK, static_cast<std::uint8_t>(NakCode::PSN_SEQUENCE_ERROR));
            ++counters_.sequence_naks_sent;
        }
        qp.nak_sent = true;
        return;
    }
    if (d < 0) {
        // IBA 9.7.5.1.3: a duplicate is never executed again; a READ is answered again.
        ++counters_.duplicate_requests;
        if (p.opcode == RcOpcode::RDMA_READ_REQUEST) {
            on_read_request(qp, p, true);
        } else if (p.opcode == RcOpcode::COMPARE_SWAP || p.opcode == RcOpcode::FETCH_ADD) {
            // An atomic this QP never executed has no record to answer from (rxe
            // duplicate_request: "Resource not found. Class D error").
            ++counters_.frames_dropped;
        } else if (!qp.duplicate_run || psn_diff(p.psn, *qp.duplicate_run) <= 0 || p.ack_request) {
            // The first of a run: one ACK of everything taken tells the requester all it
            // resends again; the rest of the run are coalesced into it, but for a packet
            // that asks for an ACK (AckReq), which gets its own, as rxe's duplicate_request
            // acknowledges duplicate SENDs and WRITEs (C9-105). A requester that went back
            // takes an ACK only for a WQE whose last packet it has sent again (rxe's
            // completer ignores it before: update_wqe_state), so the ACK of the first alone
            // would leave that WQE waiting, with nothing outstanding to time out.
            send_ack(qp, psn_add(qp.epsn, 0xFFFFFF), AethKind::ACK, 0x1F);
        }
        qp.duplicate_run = p.psn;
        return;
    }
    qp.nak_sent = false;
    qp.duplicate_run.reset();
    if (!in_sequence(qp, p.opcode) || unsupported(p.opcode)) return invalid_request(qp, p);
    if (p.opcode <= RcOpcode::SEND_ONLY_WITH_IMMEDIATE) on_send(qp, p);
    else if (p.opcode <= RcOpcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE) on_write(qp, p);
    else if (p.opcode == RcOpcode::RDMA_READ_REQUEST) on_read_request(qp, p, false);
    else ++counters_.frames_dropped;
}

bool Firmware::take_receive(Qp& qp, Receive& out, CqeResStatus& status) {
    std::array<std::byte, hsi::wqe::bytes> wqe{};
    out = Receive{};
    if (!read_list(bus_, qp.rq_memory, std::uint64_t{qp.rq_consumer.index} * hsi::wqe::bytes, wqe)) {
        status = CqeResStatus::LOCAL_QP_OPERATION_ERR;
        return false;
    }
    const auto head = load<hsi::RqWqe>(wqe);
    out.wr_id = static_cast<std::uint32_t>(hsi::rq_wqe::wr_id.of(head.wr_id[0]));
    const std::size_t slots = head.wqe_size;
    if (head.wqe_type != static_cast<std::uint8_t>(hsi::WqeType::RECV) || slots < hsi::wqe::header_slots ||
        slots - hsi::wqe::header_slots > qp.rq_sge || slots > hsi::wqe::slots) {
        ++counters_.bad_descriptors;
        status = CqeResStatus::LOCAL_QP_OPERATION_ERR;
        return false;
    }
    for (std::size_t i = 0; i < slots - hsi::wqe::header_slots; ++i) {
        const auto s = load<hsi::Sge>(std::span(wqe).subspan(hsi::wqe::header_bytes + i * sizeof(hsi::Sge)));
        out.sges.push_back(Sge{s.va_or_pa, s.l_key, s.size});
        out.capacity += s.size;
    }
    out.active = true;
    return true;
}

void Firmware::on_send(Qp& qp, Packet& p) {
    using enum RcOpcode;
    const bool first = opcode_in(p.opcode, {SEND_FIRST, SEND_ONLY, SEND_ONLY_WITH_IMMEDIATE});
    const bool last = opcode_in(p.opcode, {SEND_LAST, SEND_LAST_WITH_IMMEDIATE, SEND_ONLY, SEND_ONLY_WITH_IMMEDIATE});
    if (first) {
        if (qp.rq_size == 0 || qp.rq_consumer == qp.rq_producer) {
            // Receiver not ready: the requester waits and sends the message again.
            send_ack(qp, p.psn, AethKind::RNR_NAK, qp.min_rnr_timer);
            ++counters_.rnr_naks_sent;
            qp.nak_sent = true;  // drop the rest of the message silently
            return;
        }
        CqeResStatus status{};
        if (!take_receive(qp, qp.receive, status)) {
            post_res_cqe(qp, 0, 0, 0, qp.receive.wr_id, status, true);
            qp.rq_consumer = advance(qp.rq_consumer, qp.rq_size);
            return responder_error(qp, p, NakCode::REMOTE_OPERATIONAL_ERROR, ResErrStateReason::NO_ERROR);
        }
    }
    // After the receive is taken, as rxe checks the length after the resource.
    if (!length_ok(p, mtu_bytes(qp))) return invalid_request(qp, p);
    Receive& r = qp.receive;
    auto fail = [&](CqeResStatus status, NakCode nak) {
        post_res_cqe(qp, static_cast<std::uint32_t>(r.offset), 0, 0, r.wr_id, status, true);
        qp.rq_consumer = advance(qp.rq_consumer, qp.rq_size);
        r = Receive{};
        responder_error(qp, p, nak, ResErrStateReason::NO_ERROR);
    };
    if (r.offset + p.payload.size() > r.capacity) return fail(CqeResStatus::LOCAL_LENGTH_ERR, NakCode::INVALID_REQUEST);
    if (scatter(qp, r.sges, r.offset, p.payload) != LocalResult::ok)
        return fail(CqeResStatus::LOCAL_PROTECTION_ERR, NakCode::REMOTE_OPERATIONAL_ERROR);
    r.offset += p.payload.size();
    qp.epsn = psn_add(qp.epsn, 1);
    if (last) {
        const bool imm = p.immediate.has_value();
        const bool written = post_res_cqe(qp, static_cast<std::uint32_t>(r.offset), p.immediate.value_or(0),
                                          static_cast<std::uint16_t>(hsi::cqe_res_flags::IMM(imm ? 1 : 0)), r.wr_id,
                                          CqeResStatus::OK, p.solicited);
        qp.rq_consumer = advance(qp.rq_consumer, qp.rq_size);
        r = Receive{};
        qp.msn = psn_add(qp.msn, 1);
        if (!written) {
            // The CQ overflowed (or its memory faulted): the QP fails, nothing is acknowledged.
            return enter_error(qp, true, hsi::ReqErrStateReason::NO_ERROR, ResErrStateReason::NO_ERROR);
        }
    }
    acknowledge(qp, p, last);
}

void Firmware::on_write(Qp& qp, Packet& p) {
    using enum RcOpcode;
    const bool first = opcode_in(p.opcode, {RDMA_WRITE_FIRST, RDMA_WRITE_ONLY, RDMA_WRITE_ONLY_WITH_IMMEDIATE});
    const bool last = opcode_in(
        p.opcode, {RDMA_WRITE_LAST, RDMA_WRITE_LAST_WITH_IMMEDIATE, RDMA_WRITE_ONLY, RDMA_WRITE_ONLY_WITH_IMMEDIATE});
    const bool imm = p.immediate.has_value();
    if (last && imm && (qp.rq_size == 0 || qp.rq_consumer == qp.rq_producer)) {
        send_ack(qp, p.psn, AethKind::RNR_NAK, qp.min_rnr_timer);
        ++counters_.rnr_naks_sent;
        qp.nak_sent = true;
        return;
    }
    if (!length_ok(p, mtu_bytes(qp))) return invalid_request(qp, p);
    if (first) {
        const Reth reth = p.reth.value_or(Reth{});
        if (auto reason = remote_check(qp, reth.rkey, reth.va, reth.length, true))
            return responder_error(qp, p, NakCode::REMOTE_ACCESS_ERROR, *reason);
        qp.write = InboundWrite{true, reth.va, reth.rkey, reth.length, 0};
    }
    InboundWrite& w = qp.write;
    if (w.offset + p.payload.size() > w.length)
        return responder_error(qp, p, NakCode::INVALID_REQUEST, ResErrStateReason::NO_ERROR);
    if (!p.payload.empty()) {
        Mr* mr = find_mr(w.rkey);
        if (!mr || !mr->registered)
            return responder_error(qp, p, NakCode::REMOTE_ACCESS_ERROR, ResErrStateReason::RX_INVALID_R_KEY);
        if (!mr_copy_in(*mr, w.va + w.offset, p.payload))
            return responder_error(qp, p, NakCode::REMOTE_OPERATIONAL_ERROR, ResErrStateReason::NO_ERROR);
    }
    w.offset += p.payload.size();
    qp.epsn = psn_add(qp.epsn, 1);
    if (last) {
        if (w.offset != w.length) return responder_error(qp, p, NakCode::INVALID_REQUEST, ResErrStateReason::NO_ERROR);
        const std::uint64_t length = w.length;
        w = InboundWrite{};
        if (imm) {
            Receive r;
            CqeResStatus status{};
            const bool ok = take_receive(qp, r, status);
            // WRITE_WITH_IMMEDIATE: length = the RDMA payload length [UNCERTAIN, §5.5.2].
            const bool written =
                post_res_cqe(qp, ok ? static_cast<std::uint32_t>(length) : 0, *p.immediate,
                             static_cast<std::uint16_t>(hsi::cqe_res_flags::IMM(1) | hsi::cqe_res_flags::RDMA(1)),
                             r.wr_id, ok ? CqeResStatus::OK : status, p.solicited);
            qp.rq_consumer = advance(qp.rq_consumer, qp.rq_size);
            if (!ok) return responder_error(qp, p, NakCode::REMOTE_OPERATIONAL_ERROR, ResErrStateReason::NO_ERROR);
            if (!written) return enter_error(qp, true, hsi::ReqErrStateReason::NO_ERROR, ResErrStateReason::NO_ERROR);
        }
        qp.msn = psn_add(qp.msn, 1);
    }
    acknowledge(qp, p, last);
}

void Firmware::on_read_request(Qp& qp, const Packet& p, bool duplicate) {
    const Reth reth = p.reth.value_or(Reth{});
    const std::uint32_t mtu = mtu_bytes(qp);
    const std::uint32_t n = hsi::npkts(reth.length, mtu);
    // A duplicate (a requester asking again from its first missing response, or a copy)
    // is answered from the PSN it names, from memory as it is now, only where it asks
    // again for (part of) one of the last READs taken: its PSN among that READ's, its
    // R_Key that READ's, its range and responses inside that READ's. Else it is no read
    // this QP still knows, and is dropped (rxe duplicate_request and find_resource: "Class
    // D error. Drop the request").
    if (duplicate) {
        const auto record = std::find_if(qp.reads.begin(), qp.reads.end(), [&](const ReadRecord& r) {
            return psn_diff(p.psn, r.first_psn) >= 0 && psn_diff(p.psn, r.last_psn) <= 0;
        });
        if (record == qp.reads.end() || reth.rkey != record->rkey || reth.va < record->va ||
            reth.va + reth.length > record->va + record->length ||
            psn_diff(psn_add(p.psn, n - 1), record->last_psn) > 0) {
            ++counters_.frames_dropped;
            return;
        }
    }
    if (qp.max_dest_rd_atomic < hsi::irrq_slots(1))
        return responder_error(qp, p, NakCode::INVALID_REQUEST, ResErrStateReason::NO_ERROR);
    if (!duplicate && !length_ok(p, mtu)) return invalid_request(qp, p);
    if (auto reason = remote_check(qp, reth.rkey, reth.va, reth.length, false))
        return responder_error(qp, p, NakCode::REMOTE_ACCESS_ERROR, *reason);
    if (!duplicate) {
        // The responder depth, in READs: max_dest_rd_atomic = 2 x depth + 2 (§4.6.9).
        const std::size_t depth = (qp.max_dest_rd_atomic - 2u) / 2u;
        qp.reads.push_back(ReadRecord{p.psn, psn_add(p.psn, n - 1), reth.va, reth.rkey, reth.length});
        while (qp.reads.size() > depth) qp.reads.pop_front();
    }
    Mr* mr = reth.length ? find_mr(reth.rkey) : nullptr;
    if (!duplicate) qp.msn = psn_add(qp.msn, 1);
    qp.unacknowledged = 0;  // the responses' AETH acknowledges every request before
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint64_t offset = std::uint64_t{i} * mtu;
        Packet r;
        r.opcode = n == 1       ? RcOpcode::RDMA_READ_RESPONSE_ONLY
                   : i == 0     ? RcOpcode::RDMA_READ_RESPONSE_FIRST
                   : i + 1 == n ? RcOpcode::RDMA_READ_RESPONSE_LAST
                                : RcOpcode::RDMA_READ_RESPONSE_MIDDLE;
        r.psn = psn_add(p.psn, i);
        if (has_aeth(r.opcode)) r.aeth = Aeth{AethKind::ACK, 0x1F, qp.msn};
        // The bytes go from the bus read straight into the frame being built.
        Frame frame = transmitter_.frame();
        const auto payload =
            frame_for(qp, r, static_cast<std::size_t>(std::min<std::uint64_t>(mtu, reth.length - offset)), frame);
        if (mr && !payload.empty() && !mr_copy_out(*mr, reth.va + offset, payload))
            return responder_error(qp, p, NakCode::REMOTE_OPERATIONAL_ERROR, ResErrStateReason::NO_ERROR);
        transmit(qp, std::move(frame));
    }
    if (!duplicate) qp.epsn = psn_add(qp.epsn, n);
}

void Firmware::acknowledge(Qp& qp, const Packet& p, bool last) {
    // Coalesced as hardware does (IBA 9.7.5.1.1 lets one ACK stand for every request
    // before it): on AckReq, at the end of each message, and at least every
    // ModelOptions::ack_every requests of a long message whose requester asks for none.
    if (!p.ack_request && !last && ++qp.unacknowledged < std::max<std::uint32_t>(1, options_.ack_every)) return;
    send_ack(qp, p.psn, AethKind::ACK, 0x1F);
}

void Firmware::send_ack(Qp& qp, std::uint32_t psn, AethKind kind, std::uint8_t value) {
    if (kind == AethKind::ACK) ++counters_.acks_sent;
    qp.unacknowledged = 0;  // a NAK too acknowledges what precedes it
    Packet a;
    a.opcode = RcOpcode::ACKNOWLEDGE;
    a.psn = psn;
    a.aeth = Aeth{kind, value, qp.msn};
    transmit(qp, std::move(a));
}

void Firmware::invalid_request(Qp& qp, const Packet& p) {
    // rxe (do_class_ac_error, then do_complete): the receive a SEND was filling completes
    // with an error, its bytes so far in place; then NAK Invalid Request and ERR.
    if (Receive& r = qp.receive; r.active) {
        post_res_cqe(qp, static_cast<std::uint32_t>(r.offset), 0, 0, r.wr_id, CqeResStatus::REMOTE_INVALID_REQUEST_ERR,
                     true);
        qp.rq_consumer = advance(qp.rq_consumer, qp.rq_size);
        r = Receive{};
    }
    responder_error(qp, p, NakCode::INVALID_REQUEST, ResErrStateReason::NO_ERROR);
}

void Firmware::responder_error(Qp& qp, const Packet& p, NakCode nak, ResErrStateReason reason) {
    send_ack(qp, p.psn, AethKind::NAK, static_cast<std::uint8_t>(nak));
    enter_error(qp, true, hsi::ReqErrStateReason::NO_ERROR, reason);
}

}  // namespace rig::bnxt::sim::detail

// The requester side of an RC QP (docs/hsi.md §5.7.1, §5.7.2): WQEs taken from the
// SQ in order once the QP is in RTS, checked, sent as packets with PSNs, completed in
// order when acknowledged (or when their read responses arrived), with a REQ CQE for each
// signaled or failed WQE (sq_cons_idx = (index + 1) % sq_size).
//
// Checks when a WQE is taken (§5.2, §5.7.1 step 2): a type the model runs (SEND,
// SEND_WITH_IMMEDIATE, RDMA_WRITE(_WITH_IMMEDIATE), RDMA_READ; others, and poison, get
// LOCAL_QP_OPERATION_ERR); wqe_size consistent with the SGE count (at most the QP's
// sq_sge) or the inline length (at most 96 bytes and the QP's inline limit; never for
// READ); `length` equal to the sum of the SGEs (else LOCAL_LENGTH_ERR); every SGE's l_key
// valid for the QP, LOCAL_WRITE for a READ's destination (else LOCAL_PROTECTION_ERR). The
// PSN search entry the driver wrote (§5.4) is compared and a mismatch counted.
//
// Transport (IBA 9.7): packets of at most the path MTU; an acknowledgement requested on
// each message's last packet and every ModelOptions::ack_every packets; at most
// ModelOptions::window_packets unacknowledged; RDMA READs outstanding up to the initiator depth
// (max_rd_atomic - 1), each counted from its first send until it completes. The packets
// not yet acknowledged are kept as their WQEs (sent again from memory, as hardware does). Acknowledgements are cumulative; a NAK
// acknowledges what precedes it. Going back resends every packet from a PSN on (go-back-N;
// a READ: its request again, for the rest from the first response not yet placed, as
// Linux's rxe does, answered from FIRST or ONLY on):
//   - a NAK PSN sequence error goes back to its PSN, an implied NAK (an ACK past a READ
//     whose responses are missing, or a READ response past the first missing one, IBA
//     9.7.5.1.5) to the first missing response; each only where that PSN is the first
//     unacknowledged one (an earlier one is a late or copied NAK, acknowledged since) and
//     once per PSN (the responder sends one NAK per gap, and every response behind a lost
//     one implies the same NAK), counted against the retry count;
//   - no progress for 4.096 us x 2^timeout (the local ACK timeout, IBA 9.7.6.1.1, timeout
//     0: no timer) goes back to the first unacknowledged PSN;
//   - retry_cnt go-backs without progress, then the next one fails the WQE with
//     TRANSPORT_RETRY_CNT_ERR (what the driver reports as TransportRetryExceeded);
//     progress (a packet newly acknowledged, a response placed) restores the count;
//   - an RNR NAK waits the responder's RNR timer and resends, rnr_retry times (7:
//     forever), then RNR_NAK_RETRY_CNT_ERR.
// Other NAKs fail their WQE with REMOTE_INVALID_REQUEST_ERR, REMOTE_ACCESS_ERR or
// REMOTE_OPERATION_ERR, the reserved codes 4-31 with REMOTE_OPERATION_ERR (rxe check_ack).
// A failed WQE completes after those before it, then the QP enters ERR and flushes
// (qp.cpp).
// A bus fault reading payload or WQE gives LOCAL_PROTECTION_ERR / LOCAL_QP_OPERATION_ERR
// [UNCERTAIN: the status hardware reports for a PCIe fault; IB's nearest codes].
#include <algorithm>

#include "firmware.hpp"

namespace rig::bnxt::sim::detail {

using hsi::CqeReqStatus;
using hsi::ReqErrStateReason;
using hsi::WqeType;

namespace {

constexpr std::uint64_t max_message_bytes = std::uint64_t{1} << 31;  // IB: 2^31

bool is_read(const SendWork& w) { return w.type == WqeType::RDMA_READ; }
bool is_write(WqeType t) { return t == WqeType::RDMA_WRITE || t == WqeType::RDMA_WRITE_WITH_IMMEDIATE; }
bool with_immediate(WqeType t) { return t == WqeType::SEND_WITH_IMMEDIATE || t == WqeType::RDMA_WRITE_WITH_IMMEDIATE; }

// IBA 9.7.6.1.1: the local ACK timeout.
Nanoseconds transport_timeout(std::uint8_t t) { return Nanoseconds(std::int64_t{4096} << t); }

// IBA Table 45: RNR NAK timer field values, in microseconds.
constexpr std::array<std::int64_t, 32> rnr_us{
    655360, 10,   20,   30,   40,    60,    80,    120,   160,   240,   320,   480,    640,    960,    1280,   1920,
    2560,   3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};

RcOpcode packet_opcode(WqeType type, bool first, bool last) {
    const bool imm = with_immediate(type);
    if (is_write(type)) {
        if (first && last) return imm ? RcOpcode::RDMA_WRITE_ONLY_WITH_IMMEDIATE : RcOpcode::RDMA_WRITE_ONLY;
        if (first) return RcOpcode::RDMA_WRITE_FIRST;
        if (last) return imm ? RcOpcode::RDMA_WRITE_LAST_WITH_IMMEDIATE : RcOpcode::RDMA_WRITE_LAST;
        return RcOpcode::RDMA_WRITE_MIDDLE;
    }
    if (first && last) return imm ? RcOpcode::SEND_ONLY_WITH_IMMEDIATE : RcOpcode::SEND_ONLY;
    if (first) return RcOpcode::SEND_FIRST;
    if (last) return imm ? RcOpcode::SEND_LAST_WITH_IMMEDIATE : RcOpcode::SEND_LAST;
    return RcOpcode::SEND_MIDDLE;
}

void note_sent(Qp& qp, std::uint32_t end) {
    if (psn_diff(end, qp.sent_end) > 0) qp.sent_end = end;
}

// Whether `psn` names a packet this QP sent (or a response to one): before sent_end, in
// the half of the PSN space behind it (psn_diff).
bool was_sent(const Qp& qp, std::uint32_t psn) { return psn_diff(psn, qp.sent_end) < 0; }

std::uint32_t recount_in_flight(const Qp& qp) {
    std::uint32_t n = 0;
    for (const SendWork& w : qp.sending) {
        if (w.done) continue;
        if (is_read(w)) n += w.sent > 0 ? w.npkts - w.acked : 0;
        else n += w.sent > w.acked ? w.sent - w.acked : 0;
    }
    return n;
}

}  // namespace

std::uint32_t Firmware::mtu_bytes(const Qp& qp) const {
    return hsi::path_mtu_bytes(static_cast<hsi::PathMtu>(qp.path_mtu));
}

void Firmware::pump(Qp& qp) {
    if (qp.state != hsi::QpState::RTS || qp.rnr_deadline) return;
    for (;;) {
        bool blocked = false;
        for (SendWork& w : qp.sending) {
            if (w.done || w.sent >= w.npkts) continue;
            if (!send_work_packet(qp, w)) {
                blocked = true;
                break;
            }
        }
        if (blocked || qp.state != hsi::QpState::RTS || qp.sq_stopped || qp.sq_next == qp.sq_producer) break;
        take_wqe(qp);
    }
    complete_sends(qp);
    if (qp.state == hsi::QpState::RTS && qp.in_flight > 0 && !qp.retry_deadline) restart_retry_timer(qp);
}

bool Firmware::take_wqe(Qp& qp) {
    SendWork w;
    w.index = qp.sq_next.index;
    qp.sq_next = advance(qp.sq_next, qp.sq_size);
    auto fail = [&](CqeReqStatus status, ReqErrStateReason reason) {
        w.done = true;
        w.status = status;
        w.reason = reason;
        qp.sq_stopped = true;
        qp.sending.push_back(std::move(w));
        return false;
    };
    std::array<std::byte, hsi::wqe::bytes> wqe{};
    if (!read_list(bus_, qp.sq_memory, std::uint64_t{w.index} * hsi::wqe::bytes, wqe))
        return fail(CqeReqStatus::LOCAL_QP_OPERATION_ERR, ReqErrStateReason::TX_MEMORY_ERROR);
    const auto send = load<hsi::SqSendWqe>(wqe);
    const auto rdma = load<hsi::SqRdmaWqe>(wqe);
    const auto type = static_cast<WqeType>(send.wqe_type);
    switch (type) {
    case WqeType::SEND:
    case WqeType::SEND_WITH_IMMEDIATE:
        w.length = send.length;
        w.immediate = send.inv_key_or_imm_data;
        break;
    case WqeType::RDMA_WRITE:
    case WqeType::RDMA_WRITE_WITH_IMMEDIATE:
    case WqeType::RDMA_READ:
        w.length = rdma.length;
        w.immediate = rdma.imm_data;
        w.remote_va = rdma.remote_va;
        w.rkey = rdma.remote_key;
        break;
    case WqeType::SEND_WITH_INVALIDATE:
    case WqeType::ATOMIC_CMP_AND_SWAP:
    case WqeType::ATOMIC_FETCH_AND_ADD:
    case WqeType::LOCAL_INVALIDATE:
    case WqeType::FAST_REGISTER:
    case WqeType::BIND:
    case WqeType::FR_PPMR:
        // Real operations the model does not run (a gap, stated).
        return fail(CqeReqStatus::LOCAL_QP_OPERATION_ERR, ReqErrStateReason::NO_ERROR);
    default:
        ++counters_.bad_descriptors;  // RECV on the SQ, poison, garbage
        return fail(CqeReqStatus::LOCAL_QP_OPERATION_ERR, ReqErrStateReason::NO_ERROR);
    }
    w.type = type;
    w.signaled = hsi::wqe_flags::SIGNAL_COMP.of(send.flags) || hsi::create_qp::FORCE_COMPLETION.of(qp.flags);
    w.solicited = hsi::wqe_flags::SE.of(send.flags);
    w.is_inline = hsi::wqe_flags::INLINE.of(send.flags);
    const std::size_t slots_used = send.wqe_size;
    if (w.is_inline) {
        const std::uint64_t limit = std::min<std::uint64_t>(hsi::wqe::max_inline_bytes, qp.max_inline_data);
        if (is_read(w) || w.length > limit || slots_used != hsi::wqe_size_inline(w.length)) {
            ++counters_.bad_descriptors;
            return fail(CqeReqStatus::LOCAL_QP_OPERATION_ERR, ReqErrStateReason::NO_ERROR);
        }
        w.inline_data.assign(wqe.begin() + hsi::wqe::header_bytes,
                             wqe.begin() + hsi::wqe::header_bytes + static_cast<std::ptrdiff_t>(w.length));
    } else {
        if (slots_used < hsi::wqe::header_slots || slots_used - hsi::wqe::header_slots > qp.sq_sge ||
            slots_used > hsi::wqe::slots) {
            ++counters_.bad_descriptors;
            return fail(CqeReqStatus::LOCAL_QP_OPERATION_ERR, ReqErrStateReason::NO_ERROR);
        }
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < slots_used - hsi::wqe::header_slots; ++i) {
            const auto s = load<hsi::Sge>(std::span(wqe).subspan(hsi::wqe::header_bytes + i * sizeof(hsi::Sge)));
            w.sges.push_back(Sge{s.va_or_pa, s.l_key, s.size});
            total += s.size;
        }
        if (total != w.length) return fail(CqeReqStatus::LOCAL_LENGTH_ERR, ReqErrStateReason::NO_ERROR);
        for (const Sge& s : w.sges)
            if (!local_ok(qp, s, is_read(w)))
                return fail(CqeReqStatus::LOCAL_PROTECTION_ERR, ReqErrStateReason::NO_ERROR);
    }
    if (w.length > max_message_bytes) return fail(CqeReqStatus::LOCAL_LENGTH_ERR, ReqErrStateReason::NO_ERROR);
    w.first_psn = qp.next_psn;
    w.npkts = hsi::npkts(w.length, mtu_bytes(qp));
    qp.next_psn = psn_add(qp.next_psn, w.npkts);
    // §5.4: the driver's PSN search entry for this WQE, checked to catch driver bugs.
    std::array<std::byte, hsi::psn_search::entry_bytes> entry{};
    if (read_list(bus_, qp.sq_memory, hsi::psn_search_offset(qp.sq_size, w.index), entry)) {
        const auto e = load<hsi::SqPsnSearchExt>(entry);
        if (hsi::psn_search::start_psn.of(e.opcode_start_psn) != w.first_psn ||
            hsi::psn_search::opcode.of(e.opcode_start_psn) != send.wqe_type ||
            hsi::psn_search::next_psn.of(e.flags_next_psn) != qp.next_psn ||
            e.start_slot_idx != static_cast<std::uint16_t>(w.index * hsi::wqe::slots))
            ++counters_.psn_search_mismatches;
    }
    qp.sending.push_back(std::move(w));
    return true;
}

bool Firmware::send_work_packet(Qp& qp, SendWork& w) {
    const std::uint32_t mtu = mtu_bytes(qp);
    if (is_read(w)) {
        // A READ takes its place at the responder when first sent and holds it until it
        // completes, in order: one whose responses all came behind one still missing some
        // holds it too, and one asked for again takes no other (Linux rxe_req.c takes
        // qp->req.rd_atomic once per WQE, rxe_comp.c complete_ack gives it back). Else the
        // responder, which keeps the last max_dest_rd_atomic READs, would have forgotten
        // the one asked for again (responder.cpp).
        if (!w.holds_read_slot) {
            const unsigned depth = qp.max_rd_atomic > 0 ? qp.max_rd_atomic - 1u : 0u;
            const auto outstanding = std::count_if(qp.sending.begin(), qp.sending.end(),
                                                   [](const SendWork& o) { return o.holds_read_slot; });
            if (static_cast<unsigned>(outstanding) >= depth) return false;
            w.holds_read_slot = true;
        }
        // The rest of the read from the first response not yet placed (IBA 9.7.5.1.5).
        const std::uint64_t done_bytes = std::uint64_t{w.acked} * mtu;
        Packet p;
        p.opcode = RcOpcode::RDMA_READ_REQUEST;
        p.psn = psn_add(w.first_psn, w.acked);
        p.ack_request = true;
        p.reth = Reth{w.remote_va + done_bytes, w.rkey,
                      static_cast<std::uint32_t>(w.length - std::min(w.length, done_bytes))};
        transmit(qp, std::move(p));
        w.asked_mid = w.asked_mid || w.acked > 0;
        note_sent(qp, psn_add(w.first_psn, w.npkts));
        w.sent = w.npkts;
        qp.in_flight = recount_in_flight(qp);
        return true;
    }
    while (w.sent < w.npkts) {
        if (qp.in_flight >= options_.window_packets) return false;
        const std::uint32_t k = w.sent;
        const std::uint64_t offset = std::uint64_t{k} * mtu;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(mtu, w.length - offset));
        const bool first = k == 0;
        const bool last = k + 1 == w.npkts;
        Packet p;
        p.opcode = packet_opcode(w.type, first, last);
        p.psn = psn_add(w.first_psn, k);
        p.solicited = last && w.solicited;
        p.ack_request = last || (k + 1) % std::max<std::uint32_t>(1, options_.ack_every) == 0;
        if (is_write(w.type) && first) p.reth = Reth{w.remote_va, w.rkey, static_cast<std::uint32_t>(w.length)};
        if (last && with_immediate(w.type)) p.immediate = w.immediate;
        // The payload goes from the bus read straight into the frame being built.
        Frame frame = transmitter_.frame();
        const auto payload = frame_for(qp, p, n, frame);
        if (w.is_inline) {
            std::copy_n(w.inline_data.begin() + static_cast<std::ptrdiff_t>(offset), n, payload.begin());
        } else if (const auto r = gather(qp, w.sges, offset, payload); r != LocalResult::ok) {
            fail_work(qp, w, CqeReqStatus::LOCAL_PROTECTION_ERR,
                      r == LocalResult::bus ? ReqErrStateReason::TX_MEMORY_ERROR : ReqErrStateReason::NO_ERROR);
            return false;
        }
        transmit(qp, std::move(frame));
        note_sent(qp, psn_add(w.first_psn, k + 1));
        ++w.sent;
        ++qp.in_flight;
    }
    return true;
}

void Firmware::fail_work(Qp& qp, SendWork& w, CqeReqStatus status, ReqErrStateReason reason) {
    w.done = true;
    w.status = status;
    w.reason = reason;
    qp.sq_stopped = true;
    qp.in_flight = recount_in_flight(qp);
}

void Firmware::complete_sends(Qp& qp) {
    while (!qp.sending.empty() && qp.sending.front().done && qp.state != hsi::QpState::ERR) {
        const SendWork w = std::move(qp.sending.front());
        qp.sending.pop_front();
        const bool failed = w.status != CqeReqStatus::OK;
        bool written = true;
        if (failed || w.signaled) written = post_req_cqe(qp, w.index, w.status);
        qp.sq_consumer = advance(qp.sq_consumer, qp.sq_size);
        if (failed) {
            enter_error(qp, true, w.reason, hsi::ResErrStateReason::NO_ERROR);
            return;
        }
        if (!written) {
            enter_error(qp, true, ReqErrStateReason::NO_ERROR, hsi::ResErrStateReason::NO_ERROR);  // CQ overflow
            return;
        }
    }
}

void Firmware::acknowledge_through(Qp& qp, std::uint32_t psn, bool inclusive) {
    const std::uint32_t last = inclusive ? psn : psn_add(psn, 0xFFFFFF);
    bool progress = false;
    for (SendWork& w : qp.sending) {
        if (w.done) continue;
        const std::int32_t covered_minus_one = psn_diff(last, w.first_psn);
        if (covered_minus_one < 0) break;
        if (is_read(w)) {
            // An acknowledgement beyond a read whose responses are missing: they were lost
            // (IBA 9.7.5.1.5, implied NAK): ask again from the first missing one.
            if (covered_minus_one >= static_cast<std::int32_t>(w.npkts) - 1 && w.sent > 0)
                go_back(qp, psn_add(w.first_psn, w.acked), true);
            break;
        }
        const auto covered = std::min<std::uint32_t>(w.npkts, static_cast<std::uint32_t>(covered_minus_one) + 1);
        if (covered > w.acked) {
            w.acked = covered;
            w.sent = std::max(w.sent, w.acked);
            progress = true;
        }
        if (w.acked == w.npkts) w.done = true;
        else break;
    }
    if (progress) {
        qp.in_flight = recount_in_flight(qp);  // only progress changes it (rewind counts its own)
        qp.retries_left = qp.retry_cnt;
        qp.rnr_left = qp.rnr_retry;
        restart_retry_timer(qp);
    }
}

void Firmware::rewind(Qp& qp, std::uint32_t psn) {
    for (SendWork& w : qp.sending) {
        if (w.done) continue;
        const std::int32_t into = psn_diff(psn, w.first_psn);
        if (into >= static_cast<std::int32_t>(w.npkts)) continue;  // entirely before psn
        const std::uint32_t keep = is_read(w) ? 0 : static_cast<std::uint32_t>(std::max(into, 0));
        const std::uint32_t back_to = std::max(w.acked, std::min(w.sent, keep));
        if (w.sent > back_to) counters_.retransmissions += is_read(w) ? 1 : w.sent - back_to;
        w.sent = back_to;
    }
    qp.in_flight = recount_in_flight(qp);
}

std::optional<std::uint32_t> Firmware::first_unacknowledged(const Qp& qp) const {
    for (const SendWork& w : qp.sending) {
        if (w.done) continue;
        if (is_read(w) ? w.sent == 0 : w.sent <= w.acked) return std::nullopt;
        return psn_add(w.first_psn, w.acked);
    }
    return std::nullopt;
}

void Firmware::go_back(Qp& qp, std::uint32_t psn, bool implied) {
    // Only from the first packet outstanding: a NAK of an earlier PSN is stale (late or
    // duplicated on the way: what it asks for has been acknowledged since), one of a later
    // PSN names nothing this QP sent. And once per PSN: the responder sends one sequence NAK
    // per gap, so another of the same PSN is a copy, and read responses behind a lost one
    // each imply the same NAK; the local ACK timer resends if the go-back is lost too.
    if (first_unacknowledged(qp) != psn || qp.went_back_to == psn) return;
    if (implied) ++counters_.implied_naks;
    auto first = std::find_if(qp.sending.begin(), qp.sending.end(), [](const SendWork& w) { return !w.done; });
    // IBA 9.7.6.1.3: the retry count bounds the resends on sequence NAKs as on timeouts.
    if (qp.retries_left == 0) {
        ++counters_.retries_exceeded;
        fail_work(qp, *first, CqeReqStatus::TRANSPORT_RETRY_CNT_ERR, ReqErrStateReason::TIMEOUT_RETRY_LIMIT);
        return;
    }
    --qp.retries_left;
    ++counters_.go_backs;
    qp.went_back_to = psn;
    rewind(qp, psn);
    qp.retry_deadline.reset();  // a full timeout for what is sent again (pump restarts it)
}

void Firmware::restart_retry_timer(Qp& qp) {
    if (qp.in_flight == 0 || qp.timeout == 0) {
        qp.retry_deadline.reset();
        return;
    }
    qp.retry_deadline = clock_.now() + transport_timeout(qp.timeout);
}

void Firmware::on_retry_timeout(Qp& qp) {
    qp.retry_deadline.reset();
    auto first = std::find_if(qp.sending.begin(), qp.sending.end(), [](const SendWork& w) { return !w.done; });
    if (qp.state != hsi::QpState::RTS || first == qp.sending.end() || qp.in_flight == 0) return;
    ++counters_.local_ack_timeouts;
    if (qp.retries_left == 0) {
        ++counters_.retries_exceeded;
        fail_work(qp, *first, CqeReqStatus::TRANSPORT_RETRY_CNT_ERR, ReqErrStateReason::TIMEOUT_RETRY_LIMIT);
        complete_sends(qp);
        return;
    }
    --qp.retries_left;
    qp.went_back_to.reset();  // a NAK after this resend goes back again
    rewind(qp, psn_add(first->first_psn, first->acked));
    pump(qp);
    restart_retry_timer(qp);
}

void Firmware::on_ack(Qp& qp, const Packet& p) {
    if (!p.aeth) return;
    if (!was_sent(qp, p.psn)) {
        // Of a PSN this QP never sent (a peer whose expected PSN is not ours): taking it
        // would complete work that never arrived.
        ++counters_.frames_dropped;
        return;
    }
    const Aeth a = *p.aeth;
    if (a.kind == AethKind::ACK) {
        acknowledge_through(qp, p.psn, true);
    } else {
        acknowledge_through(qp, p.psn, false);  // a NAK acknowledges what precedes it
        auto w = std::find_if(qp.sending.begin(), qp.sending.end(), [&](const SendWork& s) {
            return !s.done && psn_diff(p.psn, s.first_psn) >= 0 &&
                   psn_diff(p.psn, s.first_psn) < static_cast<std::int32_t>(s.npkts);
        });
        if (w != qp.sending.end()) {
            if (a.kind == AethKind::RNR_NAK) {
                if (qp.rnr_retry != 7 && qp.rnr_left == 0) {
                    fail_work(qp, *w, CqeReqStatus::RNR_NAK_RETRY_CNT_ERR, ReqErrStateReason::RNR_TIMEOUT_RETRY_LIMIT);
                } else {
                    if (qp.rnr_retry != 7) --qp.rnr_left;
                    rewind(qp, p.psn);
                    qp.rnr_deadline = clock_.now() + Nanoseconds(rnr_us[a.value & 0x1F] * 1000);
                    qp.retry_deadline.reset();
                }
            } else {
                switch (static_cast<NakCode>(a.value)) {
                case NakCode::PSN_SEQUENCE_ERROR:
                    ++counters_.sequence_naks_received;
                    go_back(qp, p.psn, false);
                    break;
                case NakCode::INVALID_REQUEST:
                    fail_work(qp, *w, CqeReqStatus::REMOTE_INVALID_REQUEST_ERR, ReqErrStateReason::NAK_ARRIVAL_2);
                    break;
                case NakCode::REMOTE_ACCESS_ERROR:
                    fail_work(qp, *w, CqeReqStatus::REMOTE_ACCESS_ERR, ReqErrStateReason::NAK_ARRIVAL_3);
                    break;
                case NakCode::REMOTE_OPERATIONAL_ERROR:
                    fail_work(qp, *w, CqeReqStatus::REMOTE_OPERATION_ERR, ReqErrStateReason::NAK_ARRIVAL_4);
                    break;
                default:
                    // Codes 4-31, reserved for RC (IBA Table 44): never ignored; Linux's
                    // rxe_comp.c check_ack fails the WQE with IB_WC_REM_OP_ERR ("unexpected
                    // nak"). [UNCERTAIN] the err_state_reason hardware reports for one.
                    fail_work(qp, *w, CqeReqStatus::REMOTE_OPERATION_ERR, ReqErrStateReason::NAK_ARRIVAL_4);
                    break;
                }
            }
        }
    }
    complete_sends(qp);
    pump(qp);
}

void Firmware::on_read_response(Qp& qp, Packet& p) {
    if (!was_sent(qp, p.psn)) {
        ++counters_.frames_dropped;
        return;
    }
    auto it = std::find_if(qp.sending.begin(), qp.sending.end(), [&](const SendWork& s) {
        return !s.done && is_read(s) && psn_diff(p.psn, s.first_psn) >= 0 &&
               psn_diff(p.psn, s.first_psn) < static_cast<std::int32_t>(s.npkts);
    });
    if (it == qp.sending.end()) return;  // a duplicate of a read already complete
    SendWork& w = *it;
    const auto k = static_cast<std::uint32_t>(psn_diff(p.psn, w.first_psn));
    if (k != w.acked) {
        // Behind the first missing response: a duplicate, dropped. Past it: the ones between
        // were lost (IBA 9.7.5.1.5, implied NAK): the read is asked for again from there.
        if (k > w.acked) {
            acknowledge_through(qp, w.first_psn, false);
            go_back(qp, psn_add(w.first_psn, w.acked), true);
            complete_sends(qp);
            pump(qp);
        }
        return;
    }
    acknowledge_through(qp, w.first_psn, false);  // responses acknowledge earlier requests
    const std::uint32_t mtu = mtu_bytes(qp);
    // The responses to a request from response k on start there with FIRST (or ONLY), as
    // those of the first request do at 0; one of an earlier request may still come at k.
    const bool may_start = k == 0 || w.asked_mid;
    const bool may_continue = k > 0;
    const bool last = k + 1 == w.npkts;
    const bool opcode_fits = last ? (p.opcode == RcOpcode::RDMA_READ_RESPONSE_ONLY && may_start) ||
                                        (p.opcode == RcOpcode::RDMA_READ_RESPONSE_LAST && may_continue)
                                  : (p.opcode == RcOpcode::RDMA_READ_RESPONSE_FIRST && may_start) ||
                                        (p.opcode == RcOpcode::RDMA_READ_RESPONSE_MIDDLE && may_continue);
    const std::uint64_t offset = std::uint64_t{k} * mtu;
    const std::uint64_t expected_bytes = std::min<std::uint64_t>(mtu, w.length - offset);
    if (!opcode_fits || p.payload.size() != expected_bytes) {
        fail_work(qp, w, CqeReqStatus::BAD_RESPONSE_ERR, ReqErrStateReason::NO_ERROR);
    } else if (const auto r = scatter(qp, w.sges, offset, p.payload); r != LocalResult::ok) {
        fail_work(qp, w, CqeReqStatus::LOCAL_PROTECTION_ERR,
                  r == LocalResult::bus ? ReqErrStateReason::RX_MEMORY_ERROR : ReqErrStateReason::NO_ERROR);
    } else {
        ++w.acked;
        if (w.acked == w.npkts) w.done = true;
        // Counted again: an implied NAK above may have sent other requests back.
        qp.in_flight = recount_in_flight(qp);
        qp.retries_left = qp.retry_cnt;
        restart_retry_timer(qp);
    }
    complete_sends(qp);
    pump(qp);
}

bool Firmware::fire_timers() {
    const Nanoseconds now = clock_.now();
    for (auto& [qpn, qp] : qps_) {
        if (qp.rnr_deadline && *qp.rnr_deadline <= now) {
            qp.rnr_deadline.reset();
            pump(qp);
            return true;
        }
        if (qp.retry_deadline && *qp.retry_deadline <= now) {
            on_retry_timeout(qp);
            return true;
        }
    }
    return false;
}

bool Firmware::timers_pending() const {
    return std::any_of(qps_.begin(), qps_.end(),
                       [](const auto& e) { return e.second.rnr_deadline || e.second.retry_deadline; });
}

}  // namespace rig::bnxt::sim::detail

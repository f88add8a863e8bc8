// Doorbells, NQ entries and CQEs of the model (docs/hsi.md §5.5, §5.6, §5.8).
//
// Doorbells (§5.8.5): a value without the valid bit, of a path other than RoCE, of a type
// the model does not run, or naming an unknown queue is dropped; so is an index outside
// the ring and any position the epoch rules of ring.hpp refuse (B21). So is, as the
// hardware's doorbell page checks do, a doorbell written through another page than the
// one it may come through (§5.8.3, §5.8.4): SQ, RQ and CQ doorbells the page of the DPI
// their queue was created with, NQ, NQ_ARM and CQ_ARMENA the privileged page (DPI 0).
// Every drop counts (doorbell_drops; page faults in doorbell_page_faults too).
// CQ_ARMALL/CQ_ARMSE arm a CQ only after CQ_ARMENA (§5.8.1: "enables arming"); a
// notification uses the arm and the enable up, so the driver writes CQ_ARMENA again
// (Linux does, §5.6). NQ_ARM arms the NQ's interrupt; entries already pending beyond the
// new consumer interrupt at once.
//
// CQEs (§5.5.4): written body first, toggle byte last, toggle = the producer's phase;
// never over entries the consumer has not released: a full CQ overflows, reports a CQ
// error notification on the CREQ (cq_err_reason: the requester's or the responder's
// overflow) and takes no further CQE (its QPs then fail).
// NQ entries (§5.6): the same with the V bit; a full NQ drops the entry and counts it.
#include "firmware.hpp"
#include "rig/bnxt/hsi/doorbell.hpp"
#include "rig/bnxt/hsi/regs.hpp"

namespace rig::bnxt::sim::detail {

using hsi::DbType;

void Firmware::doorbell(std::uint64_t value, std::uint64_t offset) {
    const hsi::Doorbell d = hsi::decode(value);
    if (!d.valid || d.path != hsi::DbPath::ROCE) {
        ++counters_.doorbell_drops;
        return;
    }
    const Position position{d.index, d.epoch};
    const std::uint64_t page = (offset - hsi::bar2::doorbell_page_pf) / hsi::bar2::doorbell_page_bytes;
    auto wrong_page = [&](std::uint32_t dpi) {
        if (page == dpi) return false;
        ++counters_.doorbell_drops;
        ++counters_.doorbell_page_faults;
        return true;
    };
    switch (d.type) {
    case DbType::SQ:
    case DbType::RQ: {
        Qp* qp = find_qp(d.xid);
        const bool sq = d.type == DbType::SQ;
        if (!qp || qp->state == hsi::QpState::RESET || (!sq && qp->rq_size == 0) ||
            d.index >= (sq ? qp->sq_size : qp->rq_size)) {
            ++counters_.doorbell_drops;
            return;
        }
        if (wrong_page(qp->dpi)) return;
        Position& producer = sq ? qp->sq_producer : qp->rq_producer;
        const Position consumer = sq ? qp->sq_consumer : qp->rq_consumer;
        if (!producer_doorbell_ok(consumer, producer, position, sq ? qp->sq_size : qp->rq_size)) {
            ++counters_.doorbell_drops;
            ++counters_.epoch_faults;
            return;
        }
        ++counters_.doorbells;
        producer = position;
        if (qp->state == hsi::QpState::ERR) return;  // the driver flushes what it posts now
        if (sq) pump(*qp);
        return;
    }
    case DbType::CQ:
    case DbType::CQ_ARMSE:
    case DbType::CQ_ARMALL: {
        Cq* cq = find_cq(d.xid);
        if (!cq || d.index >= cq->size) {
            ++counters_.doorbell_drops;
            return;
        }
        if (wrong_page(cq->dpi)) return;
        if (!consumer_doorbell_ok(cq->consumer, cq->producer, position, cq->size)) {
            ++counters_.doorbell_drops;
            ++counters_.epoch_faults;
            return;
        }
        ++counters_.doorbells;
        cq->consumer = position;
        while (!cq->solicited.empty() &&
               ahead(cq->consumer, cq->solicited.front(), cq->size) >= ahead(cq->consumer, cq->producer, cq->size))
            cq->solicited.pop_front();  // released
        if (d.type == DbType::CQ) return;
        if (!cq->arm_enabled) return;  // armed without CQ_ARMENA: no effect
        cq->arm = d.type == DbType::CQ_ARMALL ? CqArm::all : CqArm::solicited;
        const bool pending = cq->consumer != cq->producer;
        if ((cq->arm == CqArm::all && pending) || (cq->arm == CqArm::solicited && !cq->solicited.empty()))
            cq_notify(*cq);
        return;
    }
    case DbType::CQ_ARMENA: {
        Cq* cq = find_cq(d.xid);
        if (!cq) {
            ++counters_.doorbell_drops;
            return;
        }
        if (wrong_page(0)) return;  // Linux: bnxt_qplib_armen_db rings the privileged page
        ++counters_.doorbells;
        cq->arm_enabled = true;
        return;
    }
    case DbType::NQ:
    case DbType::NQ_ARM: {
        NqRing* nq = find_ring(static_cast<std::uint16_t>(d.xid));
        if (!nq || d.xid > 0xFFFF || d.index >= nq->length) {
            ++counters_.doorbell_drops;
            return;
        }
        if (wrong_page(0)) return;
        if (!consumer_doorbell_ok(nq->consumer, nq->producer, position, nq->length)) {
            ++counters_.doorbell_drops;
            ++counters_.epoch_faults;
            return;
        }
        ++counters_.doorbells;
        nq->consumer = position;
        if (d.type == DbType::NQ_ARM) {
            nq->armed = true;
            nq_interrupt_if_pending(*nq);
        }
        if (channel_.latched && channel_.creq == nq->id) cmdq_run();  // a stalled channel may go on
        return;
    }
    default:
        // SRQ, SRQ_ARM, SRQ_ARMENA, CQ_CUTOFF_ACK, push: no SRQs or resizes in the model.
        ++counters_.doorbell_drops;
        return;
    }
}

bool Firmware::nq_post(NqRing& nq, std::span<const std::byte, 16> entry, testing::Written what) {
    if (ahead(nq.consumer, nq.producer, nq.length) >= nq.length) {
        ++counters_.nq_overflows;
        return false;
    }
    std::array<std::byte, 16> e{};
    std::copy(entry.begin(), entry.end(), e.begin());
    faults_.tamper(what, e);  // testing::Faults::tamper: a hostile device
    // §4.5.1 / §5.6: the phase bit in byte 8 (CREQ `v`, NQ info63_v[0] bit 0).
    e[hsi::nq::v_offset] = (e[hsi::nq::v_offset] & std::byte{0xFE}) | std::byte{phase(nq.producer)};
    if (!publish_list(bus_, nq.memory, std::uint64_t{nq.producer.index} * hsi::nq::entry_bytes, e, hsi::nq::v_offset))
        return false;
    nq.producer = advance(nq.producer, nq.length);
    nq_interrupt_if_pending(nq);
    return true;
}

void Firmware::nq_interrupt_if_pending(NqRing& nq) {
    if (!nq.armed || nq.consumer == nq.producer) return;
    nq.armed = false;
    if (nq.int_mode == hsi::IntMode::MSIX) bus_.interrupt(nq.logical_id);
}

bool Firmware::cq_post(Cq& cq, std::span<const std::byte, 32> cqe, bool solicited) {
    if (cq.overflowed) return false;
    if (ahead(cq.consumer, cq.producer, cq.size) >= cq.size) {
        cq.overflowed = true;
        // roce_hsi.h creq_cq_error_notification: the requester's (a CQE of a send queue) or
        // the responder's overflow, by the CQE that found no room.
        const auto type = static_cast<hsi::CqeType>(
            hsi::cqe::cqe_type.of(std::to_integer<std::uint8_t>(cqe[hsi::cqe::toggle_offset])));
        const bool requester = type == hsi::CqeType::REQ || type == hsi::CqeType::TERMINAL;
        hsi::CreqCqErrorNotification n{};
        n.type = static_cast<std::uint8_t>(hsi::CreqType::QP_EVENT);
        n.event = hsi::creq_event::CQ_ERROR_NOTIFICATION;
        n.cq_err_reason = static_cast<std::uint8_t>(requester ? hsi::CqErrReason::REQ_CQ_OVERFLOW_ERROR
                                                              : hsi::CqErrReason::RES_CQ_OVERFLOW_ERROR);
        n.xid = cq.id;
        std::array<std::byte, 16> entry{};
        rig::little_endian::store(std::span(entry), n);
        creq_post(entry);
        return false;
    }
    std::array<std::byte, 32> e{};
    std::copy(cqe.begin(), cqe.end(), e.begin());
    faults_.rewrite_cqe(e);  // testing::Faults::rewrite_cqes: a hostile device
    faults_.tamper(testing::Written::cqe, e);
    e[hsi::cqe::toggle_offset] = (e[hsi::cqe::toggle_offset] & std::byte{0xFE}) | std::byte{phase(cq.producer)};
    if (!publish_list(bus_, cq.memory, std::uint64_t{cq.producer.index} * hsi::cqe::bytes, e, hsi::cqe::toggle_offset))
        return false;
    if (solicited) cq.solicited.push_back(cq.producer);
    cq.producer = advance(cq.producer, cq.size);
    if (cq.arm == CqArm::all || (cq.arm == CqArm::solicited && solicited)) cq_notify(cq);
    return true;
}

void Firmware::cq_notify(Cq& cq) {
    // §5.6: one notification into the CQ's NQ, then the CQ is disarmed.
    cq.arm = CqArm::none;
    cq.arm_enabled = false;
    NqRing* nq = find_ring(cq.nq);
    if (!nq) return;
    hsi::NqCn n{};
    n.type = static_cast<std::uint16_t>(hsi::nq::type(static_cast<std::uint8_t>(hsi::NqType::CQ_NOTIFICATION)));
    n.cq_handle_low = static_cast<std::uint32_t>(cq.handle);
    n.cq_handle_high = static_cast<std::uint32_t>(cq.handle >> 32);
    std::array<std::byte, 16> entry{};
    rig::little_endian::store(std::span(entry), n);
    if (nq_post(*nq, entry)) ++cq.notifications;
}

bool Firmware::post_req_cqe(Qp& qp, std::uint32_t index, hsi::CqeReqStatus status) {
    Cq* cq = find_cq(qp.scq);
    if (!cq) return false;
    hsi::CqeReq c{};
    c.qp_handle = qp.handle;
    // §5.5.1: the SQ consumer after the completed WQE, (index + 1) % sq_size.
    c.sq_cons_idx = static_cast<std::uint16_t>((index + 1) % qp.sq_size);
    c.cqe_type_toggle = hsi::cqe_type_toggle(hsi::CqeType::REQ, 0);
    c.status = static_cast<std::uint8_t>(status);
    std::array<std::byte, 32> e{};
    rig::little_endian::store(std::span(e), c);
    if (status != hsi::CqeReqStatus::OK) qp.error_cqe = true;
    return cq_post(*cq, e, status != hsi::CqeReqStatus::OK);
}

bool Firmware::post_res_cqe(Qp& qp, std::uint32_t length, std::uint32_t imm, std::uint16_t flags, std::uint32_t wr_id,
                            hsi::CqeResStatus status, bool solicited) {
    Cq* cq = find_cq(qp.rcq);
    if (!cq) return false;
    hsi::CqeResRc c{};
    c.length = length;
    c.imm_data_or_inv_r_key = imm;
    c.qp_handle = qp.handle;
    c.cqe_type_toggle = hsi::cqe_type_toggle(hsi::CqeType::RES_RC, 0);
    c.status = static_cast<std::uint8_t>(status);
    c.flags = flags;
    c.srq_or_rq_wr_id = static_cast<std::uint32_t>(hsi::cqe_res_flags::srq_or_rq_wr_id(wr_id));
    std::array<std::byte, 32> e{};
    rig::little_endian::store(std::span(e), c);
    return cq_post(*cq, e, solicited || status != hsi::CqeResStatus::OK);
}

}  // namespace rig::bnxt::sim::detail

// MODIFY_QP and the error state of an RC QP (spec/bnxt-hsi.md §4.6.9, §5.7.4).
//
// Transitions (§4.6.9 model semantics): RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS,
// RTS->RTS, any->ERR, any->RESET; every other one is refused with status 5. A modify
// without the STATE bit keeps the state and is checked as that state to itself. Fields
// are taken only where modify_mask names them. Refused too (status 5): the fields Linux
// removes from RTR->RTS and SRC_MAC on INIT->RTR because firmware rejects them there; a
// path MTU code above 5; an SGID index the GID table does not hold; retry counts above 7;
// RDMA READ depths above QUERY_FUNC's; SQ/RQ sizes that differ from CREATE_QP's (the model
// does not resize).
//
// Entering RTR sets the expected PSN from rq_psn; entering RTS the next PSN from sq_psn
// and starts the send queue; ERR flushes (below); RESET forgets ring indexes and PSNs.
//
// Error state: the SQ stops; each WQE still outstanding or posted gets a REQ CQE with
// WORK_REQUEST_FLUSHED_ERR and each posted RQ WQE a RES_RC CQE with WORK_REQUEST_FLUSHED_ERR
// (the explicit-flush option of §5.7.4), in queue order. When the QP entered ERR on its own
// the CREQ also gets a QP error notification (§4.5.4).
#include "firmware.hpp"

namespace rig::bnxt::sim::detail {

using hsi::QpState;
using hsi::RcfwStatus;
namespace mm = hsi::modify_mask;

namespace {

bool transition_ok(QpState from, QpState to) {
    if (to == QpState::ERR || to == QpState::RESET) return true;
    switch (from) {
        case QpState::RESET: return to == QpState::INIT;
        case QpState::INIT: return to == QpState::INIT || to == QpState::RTR;
        case QpState::RTR: return to == QpState::RTS;
        case QpState::RTS: return to == QpState::RTS;
        default: return false;
    }
}

}  // namespace

Firmware::Answer Firmware::modify_qp(std::span<const std::byte> c) {
    const auto cmd = load<hsi::ModifyQp>(c);
    Qp* qp = find_qp(cmd.qp_cid);
    if (!qp) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    const std::uint32_t mask = cmd.modify_mask;
    const std::uint8_t state_byte = cmd.network_type_en_sqd_async_notify_new_state;
    const QpState from = qp->state;
    const auto to = (mask & mm::STATE) ? static_cast<QpState>(hsi::modify_qp::new_state.of(state_byte)) : from;
    if (static_cast<unsigned>(to) > static_cast<unsigned>(QpState::ERR) || !transition_ok(from, to))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    if (from == QpState::RTR && to == QpState::RTS && (mask & mm::NOT_ON_RTR_TO_RTS))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    if (from == QpState::INIT && to == QpState::RTR && (mask & mm::NOT_ON_INIT_TO_RTR))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    const auto& limits = options_.limits;
    const unsigned mtu = static_cast<unsigned>(hsi::modify_qp::path_mtu.of(cmd.path_mtu_pingpong_push_enable));
    if (((mask & mm::PATH_MTU) && mtu > static_cast<unsigned>(hsi::PathMtu::MTU_8192)) ||
        ((mask & mm::SGID_INDEX) && (cmd.sgid_index >= gids_.size() || !gids_[cmd.sgid_index])) ||
        ((mask & mm::RETRY_CNT) && cmd.retry_cnt > 7) || ((mask & mm::RNR_RETRY) && cmd.rnr_retry > 7) ||
        ((mask & mm::TIMEOUT) && cmd.timeout > 31) || ((mask & mm::MIN_RNR_TIMER) && cmd.min_rnr_timer > 31) ||
        ((mask & mm::MAX_RD_ATOMIC) &&
         (cmd.max_rd_atomic == 0 || cmd.max_rd_atomic > hsi::orrq_slots(limits.max_qp_init_rd_atom))) ||
        ((mask & mm::MAX_DEST_RD_ATOMIC) &&
         (cmd.max_dest_rd_atomic < 2 || cmd.max_dest_rd_atomic > hsi::irrq_slots(limits.max_qp_rd_atom))) ||
        ((mask & mm::SQ_SIZE) && cmd.sq_size != qp->sq_size) || ((mask & mm::RQ_SIZE) && cmd.rq_size != qp->rq_size) ||
        ((mask & mm::SQ_SGE) && cmd.sq_sge != qp->sq_sge) || ((mask & mm::RQ_SGE) && cmd.rq_sge != qp->rq_sge) ||
        ((mask & mm::MAX_INLINE_DATA) && cmd.max_inline_data > limits.max_inline_data))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);

    if (mask & mm::STATE) qp->network_type = static_cast<std::uint8_t>(hsi::modify_qp::network_type.of(state_byte));
    if (mask & mm::EN_SQD_ASYNC_NOTIFY) qp->en_sqd_async_notify = hsi::modify_qp::EN_SQD_ASYNC_NOTIFY.of(state_byte);
    if (mask & mm::ACCESS) qp->access = cmd.access;
    if (mask & mm::PKEY) qp->pkey = cmd.pkey;
    if (mask & mm::QKEY) qp->qkey = cmd.qkey;
    if (mask & mm::DGID) qp->dgid = cmd.dgid;
    if (mask & mm::FLOW_LABEL) qp->flow_label = static_cast<std::uint32_t>(hsi::modify_qp::flow_label.of(cmd.flow_label));
    if (mask & mm::SGID_INDEX) qp->sgid_index = cmd.sgid_index;
    if (mask & mm::HOP_LIMIT) qp->hop_limit = cmd.hop_limit;
    if (mask & mm::TRAFFIC_CLASS) qp->traffic_class = cmd.traffic_class;
    if (mask & mm::DEST_MAC) qp->dest_mac = cmd.dest_mac;
    if (mask & (mm::TOS_DSCP | mm::TOS_ECN)) qp->tos_dscp_tos_ecn = cmd.tos_dscp_tos_ecn;
    if (mask & mm::PATH_MTU) qp->path_mtu = static_cast<std::uint8_t>(mtu);
    if (mask & mm::TIMEOUT) qp->timeout = cmd.timeout;
    if (mask & mm::RETRY_CNT) qp->retry_cnt = cmd.retry_cnt;
    if (mask & mm::RNR_RETRY) qp->rnr_retry = cmd.rnr_retry;
    if (mask & mm::MIN_RNR_TIMER) qp->min_rnr_timer = cmd.min_rnr_timer;
    if (mask & mm::RQ_PSN) qp->rq_psn = static_cast<std::uint32_t>(hsi::modify_qp::psn.of(cmd.rq_psn));
    if (mask & mm::SQ_PSN) qp->sq_psn = static_cast<std::uint32_t>(hsi::modify_qp::psn.of(cmd.sq_psn));
    if (mask & mm::MAX_RD_ATOMIC) qp->max_rd_atomic = cmd.max_rd_atomic;
    if (mask & mm::MAX_DEST_RD_ATOMIC) qp->max_dest_rd_atomic = cmd.max_dest_rd_atomic;
    if (mask & mm::ENABLE_CC) qp->enable_cc = cmd.enable_cc;
    if (mask & mm::MAX_INLINE_DATA) qp->max_inline_data = cmd.max_inline_data;
    if (mask & mm::DEST_QP_ID) qp->dest_qp = static_cast<std::uint32_t>(hsi::modify_qp::dest_qp_id.of(cmd.dest_qp_id));
    if (mask & mm::SRC_MAC) qp->src_mac = cmd.src_mac;
    if (mask & mm::VLAN_ID) qp->vlan = cmd.vlan_pcp_vlan_dei_vlan_id;

    if (to == from) {
        if (to == QpState::RTS) pump(*qp);
    } else if (to == QpState::RESET) {
        reset_queues(*qp);
        qp->state = QpState::RESET;
    } else if (to == QpState::ERR) {
        enter_error(*qp, false, hsi::ReqErrStateReason::NO_ERROR, hsi::ResErrStateReason::NO_ERROR);
    } else {
        qp->state = to;
        if (to == QpState::RTR) {
            qp->epsn = qp->rq_psn;
            qp->nak_sent = false;
            qp->unacknowledged = 0;
            qp->duplicate_run.reset();
        }
        if (to == QpState::RTS) {
            qp->next_psn = qp->sq_psn;
            qp->sent_end = qp->sq_psn;
            qp->retries_left = qp->retry_cnt;
            qp->rnr_left = qp->rnr_retry;
            qp->went_back_to.reset();
            pump(*qp);
        }
    }
    Answer a;
    a.xid = qp->qpn;
    return a;
}

void Firmware::reset_queues(Qp& qp) {
    qp.sq_producer = qp.sq_next = qp.sq_consumer = Position{};
    qp.rq_producer = qp.rq_consumer = Position{};
    qp.sending.clear();
    qp.sq_stopped = false;
    qp.in_flight = 0;
    qp.retry_deadline.reset();
    qp.rnr_deadline.reset();
    qp.went_back_to.reset();
    qp.receive = Receive{};
    qp.write = InboundWrite{};
    qp.nak_sent = false;
    qp.unacknowledged = 0;
    qp.duplicate_run.reset();
    qp.msn = 0;
}

void Firmware::enter_error(Qp& qp, bool notify, hsi::ReqErrStateReason req, hsi::ResErrStateReason res) {
    if (qp.state == QpState::ERR) return;
    // WQEs complete in order: those already done (acknowledged) first.
    complete_sends(qp);
    if (qp.state == QpState::ERR) return;  // complete_sends met a failed WQE and got here itself
    qp.state = QpState::ERR;
    qp.retry_deadline.reset();
    qp.rnr_deadline.reset();
    if (notify) {
        hsi::CreqQpErrorNotification n{};
        n.type = static_cast<std::uint8_t>(hsi::CreqType::QP_EVENT);
        n.req_err_state_reason = static_cast<std::uint8_t>(req);
        n.res_err_state_reason = static_cast<std::uint8_t>(res);
        n.xid = qp.qpn;
        n.event = hsi::creq_event::QP_ERROR_NOTIFICATION;
        n.sq_cons_idx = static_cast<std::uint16_t>(qp.sq_consumer.index);
        n.rq_cons_idx = static_cast<std::uint16_t>(qp.rq_consumer.index);
        std::array<std::byte, 16> entry{};
        rig::wire::store(std::span(entry), n);
        creq_post(entry);
    }
    flush(qp);
}

void Firmware::flush(Qp& qp) {
    // Send queue: what was taken, then what was posted and not yet taken.
    for (const SendWork& w : qp.sending) {
        post_req_cqe(qp, w.index, hsi::CqeReqStatus::WORK_REQUEST_FLUSHED_ERR);
        qp.sq_consumer = advance(qp.sq_consumer, qp.sq_size);
    }
    qp.sending.clear();
    qp.in_flight = 0;
    while (qp.sq_consumer != qp.sq_producer) {
        post_req_cqe(qp, qp.sq_consumer.index, hsi::CqeReqStatus::WORK_REQUEST_FLUSHED_ERR);
        qp.sq_consumer = advance(qp.sq_consumer, qp.sq_size);
    }
    qp.sq_next = qp.sq_consumer;
    // Receive queue, the WQE a message was filling included.
    qp.receive = Receive{};
    qp.write = InboundWrite{};
    while (qp.rq_size > 0 && qp.rq_consumer != qp.rq_producer) {
        std::array<std::byte, sizeof(hsi::RqWqe)> header{};
        std::uint32_t wr_id = 0;
        if (read_list(bus_, qp.rq_memory, std::uint64_t{qp.rq_consumer.index} * hsi::wqe::bytes, header))
            wr_id = static_cast<std::uint32_t>(hsi::rq_wqe::wr_id.of(load<hsi::RqWqe>(header).wr_id[0]));
        post_res_cqe(qp, 0, 0, 0, wr_id, hsi::CqeResStatus::WORK_REQUEST_FLUSHED_ERR, true);
        qp.rq_consumer = advance(qp.rq_consumer, qp.rq_size);
    }
}

}  // namespace rig::bnxt::sim::detail

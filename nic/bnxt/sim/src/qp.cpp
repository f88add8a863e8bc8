// MODIFY_QP and the error state of an RC QP (docs/hsi.md §4.6.9, §5.7.4).
//
// Transitions and their attributes follow the InfiniBand state table (IBA 11.2.1, as
// Linux's ib_modify_qp_is_ok holds RC queue pairs to it in qp_state_table), in modify_mask
// bits: a transition must carry every required attribute and nothing but its required and
// optional ones (status 5 otherwise). Where IB has one attribute and the HSI several, the
// address vector (IB_QP_AV) is DGID, SGID_INDEX and DEST_MAC, which it must carry, with
// FLOW_LABEL, HOP_LIMIT, TRAFFIC_CLASS, VLAN_ID, TOS_DSCP, TOS_ECN and ENABLE_CC as its
// optional parts; the P_Key index is PKEY (the port has no bit):
//   RESET -> INIT   required ACCESS, PKEY
//   INIT  -> INIT   optional ACCESS, PKEY
//   INIT  -> RTR    required AV, PATH_MTU, DEST_QP_ID, RQ_PSN, MAX_DEST_RD_ATOMIC,
//                   MIN_RNR_TIMER; optional ACCESS, PKEY
//   RTR   -> RTS    required SQ_PSN, TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_RD_ATOMIC;
//                   optional ACCESS, MIN_RNR_TIMER
//   RTS   -> RTS    optional ACCESS, MIN_RNR_TIMER
//   any   -> RESET, any -> ERR: nothing beyond STATE
// Every other transition (SQD and SQE are not modelled) is refused, and so is every
// attribute outside its row: QKEY (UD), EN_SQD_ASYNC_NOTIFY (RTS -> SQD), SQ/RQ sizes,
// SGEs and inline data (IB_QP_CAP: the model does not resize), SRC_MAC (the firmware takes
// it from the GID entry; Linux clears it), PINGPONG_PUSH_MODE. A modify without the STATE
// bit keeps the state and is checked as that state to itself. Values are refused too
// (status 5): a path MTU code above 5; an SGID index the GID table does not hold; retry
// counts above 7; RDMA READ depths of 0 or above QUERY_FUNC's; and a network type that
// contradicts the SGID's kind (RoCEv2/IPv4 with an SGID that is not IPv4-mapped,
// RoCEv2/IPv6 with one that is, the reserved type 1), checked whenever the state is
// written once the QP has an SGID (Linux writes the type on every modify).
//
// Entering RTR sets the expected PSN from rq_psn; entering RTS the next PSN from sq_psn
// and starts the send queue; ERR flushes (below); RESET forgets ring indexes and PSNs.
//
// Error state, as P5 hardware enters it (§5.5.3, §5.7.4): the SQ stops. The WQEs the peer
// acknowledged complete first; a WQE that failed has its error CQE, and a receive that
// failed its error CQE (requester.cpp, responder.cpp). Nothing more is written for what is
// still outstanding or posted: the driver flushes those in software (Linux's
// __flush_sq / __flush_rq), which it learns to do from the error CQE, from a TERMINAL CQE,
// or from the QP error notification. Where the QP entered ERR on its own with SQ WQEs
// neither completed nor failed by an error CQE (an error of its responder, a CQ that
// overflowed), the SCQ gets a TERMINAL CQE naming the SQ and RQ consumers (the WQEs before
// them completed), and the CREQ a QP error notification (§4.5.4). A MODIFY_QP to ERR
// writes nothing: the driver that asked flushes. Doorbells on a QP in ERR are taken and
// do nothing.
#include "firmware.hpp"

namespace rig::bnxt::sim::detail {

using hsi::QpState;
using hsi::RcfwStatus;
namespace mm = hsi::modify_mask;

namespace {

constexpr std::uint32_t av_required = mm::DGID | mm::SGID_INDEX | mm::DEST_MAC;
constexpr std::uint32_t av_optional =
    mm::FLOW_LABEL | mm::HOP_LIMIT | mm::TRAFFIC_CLASS | mm::VLAN_ID | mm::TOS_DSCP | mm::TOS_ECN | mm::ENABLE_CC;

struct Row {
    bool valid = false;
    std::uint32_t required = 0;
    std::uint32_t optional = 0;
};

// IBA 11.2.1 for RC (ib_modify_qp_is_ok's qp_state_table).
Row transition(QpState from, QpState to) {
    if (to == QpState::RESET || to == QpState::ERR) return {from <= QpState::ERR, 0, 0};
    switch (from) {
    case QpState::RESET:
        if (to == QpState::INIT) return {true, mm::ACCESS | mm::PKEY, 0};
        break;
    case QpState::INIT:
        if (to == QpState::INIT) return {true, 0, mm::ACCESS | mm::PKEY};
        if (to == QpState::RTR)
            return {
                true,
                av_required | mm::PATH_MTU | mm::DEST_QP_ID | mm::RQ_PSN | mm::MAX_DEST_RD_ATOMIC | mm::MIN_RNR_TIMER,
                av_optional | mm::ACCESS | mm::PKEY};
        break;
    case QpState::RTR:
        if (to == QpState::RTS)
            return {true, mm::SQ_PSN | mm::TIMEOUT | mm::RETRY_CNT | mm::RNR_RETRY | mm::MAX_RD_ATOMIC,
                    mm::ACCESS | mm::MIN_RNR_TIMER};
        break;
    case QpState::RTS:
        if (to == QpState::RTS) return {true, 0, mm::ACCESS | mm::MIN_RNR_TIMER};
        break;
    default: break;
    }
    return {};
}

bool ipv4_mapped(const Gid& gid) {
    for (int i = 0; i < 10; ++i)
        if (gid[i] != 0) return false;
    return gid[10] == 0xFF && gid[11] == 0xFF;
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
    if (static_cast<unsigned>(to) > static_cast<unsigned>(QpState::ERR))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    const Row row = transition(from, to);
    const std::uint32_t attributes = mask & ~mm::STATE;
    if (!row.valid || (attributes & row.required) != row.required || (attributes & ~(row.required | row.optional)) != 0)
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
    // The network type against the kind of the SGID the QP has (or gets now).
    const bool has_sgid = (mask & mm::SGID_INDEX) != 0 || qp->state == QpState::RTR || qp->state == QpState::RTS;
    if ((mask & mm::STATE) && has_sgid && to != QpState::RESET) {
        const std::uint16_t index = (mask & mm::SGID_INDEX) ? cmd.sgid_index.get() : qp->sgid_index;
        const auto type = static_cast<hsi::NetworkType>(hsi::modify_qp::network_type.of(state_byte));
        const bool v4 = index < gids_.size() && gids_[index] && ipv4_mapped(gids_[index]->gid);
        if ((type == hsi::NetworkType::ROCE_V2_IPV4 && !v4) || (type == hsi::NetworkType::ROCE_V2_IPV6 && v4) ||
            static_cast<std::uint8_t>(type) == 1)
            return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    }

    if (mask & mm::STATE) qp->network_type = static_cast<std::uint8_t>(hsi::modify_qp::network_type.of(state_byte));
    if (mask & mm::EN_SQD_ASYNC_NOTIFY) qp->en_sqd_async_notify = hsi::modify_qp::EN_SQD_ASYNC_NOTIFY.of(state_byte);
    if (mask & mm::ACCESS) qp->access = cmd.access;
    if (mask & mm::PKEY) qp->pkey = cmd.pkey;
    if (mask & mm::QKEY) qp->qkey = cmd.qkey;
    if (mask & mm::DGID) qp->dgid = cmd.dgid;
    if (mask & mm::FLOW_LABEL)
        qp->flow_label = static_cast<std::uint32_t>(hsi::modify_qp::flow_label.of(cmd.flow_label));
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
    qp.reads.clear();
    qp.msn = 0;
    qp.error_cqe = false;
}

void Firmware::enter_error(Qp& qp, bool notify, hsi::ReqErrStateReason req, hsi::ResErrStateReason res) {
    if (qp.state == QpState::ERR) return;
    // WQEs complete in order: those already done (acknowledged) first.
    complete_sends(qp);
    if (qp.state == QpState::ERR) return;  // complete_sends met a failed WQE and got here itself
    qp.state = QpState::ERR;
    qp.retry_deadline.reset();
    qp.rnr_deadline.reset();
    if (notify && !qp.error_cqe && qp.sq_consumer != qp.sq_producer) {
        // §5.5.3: the WQEs before sq_cons_idx completed; the driver flushes the rest.
        if (Cq* cq = find_cq(qp.scq)) {
            hsi::CqeTerminal t{};
            t.qp_handle = qp.handle;
            t.sq_cons_idx = static_cast<std::uint16_t>(qp.sq_consumer.index);
            t.rq_cons_idx = static_cast<std::uint16_t>(qp.rq_consumer.index);
            t.cqe_type_toggle = hsi::cqe_type_toggle(hsi::CqeType::TERMINAL, 0);
            std::array<std::byte, 32> e{};
            rig::little_endian::store(std::span(e), t);
            cq_post(*cq, e, true);
        }
    }
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
        rig::little_endian::store(std::span(entry), n);
        creq_post(entry);
    }
    stop_queues(qp);
}

void Firmware::stop_queues(Qp& qp) {
    // What was taken and what was posted stays for the driver to flush; the consumers
    // stay where the last CQE left them.
    qp.sending.clear();
    qp.in_flight = 0;
    qp.sq_next = qp.sq_consumer;
    qp.receive = Receive{};
    qp.write = InboundWrite{};
}

}  // namespace rig::bnxt::sim::detail

// Cq::poll and Cq::wait: the hot path that turns CQEs into Completions (rig/bnxt/cq.hpp;
// spec/bnxt-hsi.md §5.5, §5.6, §5.8).
//
// One pass: first the rest of a requester CQE the last call had no room for (carry), then
// every new CQE while `out` has room, then, where a queue pair of this Cq failed, its
// flushed entries; finally one CQ doorbell releasing what was consumed. Nothing here
// allocates, locks or builds a string.
#include <array>
#include <stdexcept>

#include "doorbell.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/text.hpp"
#include "rig/wire.hpp"
#include "state.hpp"

namespace rig::bnxt {
namespace {

Qp::State* find(const Cq::State& cq, std::uint64_t handle) {
    for (Qp::State* qp : cq.qps)
        if (qp->handle == handle) return qp;
    return nullptr;
}

// Reports the send-queue entries before sq_done_until: the signalled ones, and the last
// with the CQE's status where it failed (§5.5.1). false where `out` filled first.
bool report_sends(Qp::State& qp, std::span<Completion> out, std::size_t& n) {
    std::uint64_t r = qp.sq_retired.load(std::memory_order_relaxed);
    (void)qp.sq_posted.load(std::memory_order_acquire);  // the poster's shadow entries
    while (r < qp.sq_done_until) {
        const SendEntry& e = qp.sq_shadow[r % qp.sq_size];
        const bool last = r + 1 == qp.sq_done_until;
        const bool error = last && qp.sq_status != Status::Ok;
        if (e.signalled || error) {
            if (n == out.size()) {
                qp.sq_retired.store(r, std::memory_order_release);
                return false;
            }
            out[n++] = Completion{e.id, e.op, error ? qp.sq_status : Status::Ok, error ? qp.sq_code : std::uint8_t{0},
                                  e.bytes, std::nullopt, qp.qpn};
        }
        ++r;
    }
    qp.sq_retired.store(r, std::memory_order_release);
    if (qp.sq_status != Status::Ok || qp.sq_fail_after) qp.fail();
    return true;
}

// §5.5.3, §5.2.5: every entry of a failed queue pair not yet reported, with Flushed.
void report_flushes(Cq::State& cq, std::span<Completion> out, std::size_t& n) {
    for (Qp::State* qp : cq.qps) {
        if (!qp->failed.load(std::memory_order_acquire)) {
            // The firmware said Error (§4.5.4) and no CQE of this Cq is left to say why.
            if (!qp->notified.load(std::memory_order_acquire)) continue;
            qp->fail();
        }
        if (qp->send_cq.get() == &cq) {
            const std::uint64_t posted = qp->sq_posted.load(std::memory_order_acquire);
            std::uint64_t r = qp->sq_retired.load(std::memory_order_relaxed);
            for (; r < posted && n < out.size(); ++r) {
                const SendEntry& e = qp->sq_shadow[r % qp->sq_size];
                out[n++] = Completion{e.id, e.op, Status::Flushed, 0, e.bytes, std::nullopt, qp->qpn};
            }
            qp->sq_done_until = r;
            qp->sq_retired.store(r, std::memory_order_release);
        }
        if (qp->recv_cq.get() == &cq) {
            const std::uint64_t posted = qp->rq_posted.load(std::memory_order_acquire);
            std::uint64_t r = qp->rq_retired.load(std::memory_order_relaxed);
            for (; r < posted && n < out.size(); ++r) {
                const RecvEntry& e = qp->rq_shadow[r % qp->rq_size];
                out[n++] = Completion{e.id, Op::Recv, Status::Flushed, 0, e.bytes, std::nullopt, qp->qpn};
            }
            qp->rq_retired.store(r, std::memory_order_release);
        }
    }
}

// One CQE; false where `out` filled before the CQE was wholly reported.
bool take(Cq::State& cq, std::span<const std::byte, hsi::cqe::bytes> bytes, std::uint8_t type_toggle,
          std::span<Completion> out, std::size_t& n) {
    switch (static_cast<hsi::CqeType>(hsi::cqe::cqe_type.of(type_toggle))) {
        case hsi::CqeType::REQ: {
            const auto c = wire::load<hsi::CqeReq>(bytes);
            Qp::State* qp = find(cq, c.qp_handle);
            if (qp == nullptr || qp->failed.load(std::memory_order_relaxed)) return true;  // stale, or flushed
            const std::uint64_t retired = qp->sq_retired.load(std::memory_order_relaxed);
            const std::uint64_t until = detail::completed_until(retired, c.sq_cons_idx, qp->sq_size);
            if (until == retired) return true;  // completes nothing: not a CQE of ours
            qp->sq_done_until = until;
            qp->sq_status = requester_status(c.status);
            qp->sq_code = c.status;
            if (report_sends(*qp, out, n)) return true;
            cq.carry = qp;
            return false;
        }
        case hsi::CqeType::RES_RC: {
            const auto c = wire::load<hsi::CqeResRc>(bytes);
            Qp::State* qp = find(cq, c.qp_handle);
            if (qp == nullptr || qp->failed.load(std::memory_order_relaxed)) return true;
            const std::uint64_t r = qp->rq_retired.load(std::memory_order_relaxed);
            if (r >= qp->rq_posted.load(std::memory_order_acquire)) return true;  // no receive outstanding
            // §5.3: receives complete in RQ order; the tag names the oldest.
            if (hsi::cqe_res_flags::srq_or_rq_wr_id.of(c.srq_or_rq_wr_id) != r % qp->rq_size) return true;
            const RecvEntry& e = qp->rq_shadow[r % qp->rq_size];
            const Status status = responder_status(c.status);
            std::optional<std::uint32_t> immediate;
            if (hsi::cqe_res_flags::IMM.of(c.flags) != 0) immediate = c.imm_data_or_inv_r_key.get();
            out[n++] = Completion{e.id, Op::Recv, status, c.status, c.length, immediate, qp->qpn};
            qp->rq_retired.store(r + 1, std::memory_order_release);
            if (status != Status::Ok) qp->fail();
            return true;
        }
        case hsi::CqeType::TERMINAL: {
            // §5.5.3: the WQEs before sq_cons_idx succeeded; the rest flush.
            const auto c = wire::load<hsi::CqeTerminal>(bytes);
            Qp::State* qp = find(cq, c.qp_handle);
            if (qp == nullptr || qp->failed.load(std::memory_order_relaxed)) return true;
            qp->sq_done_until = detail::completed_until(qp->sq_retired.load(std::memory_order_relaxed), c.sq_cons_idx,
                                                        qp->sq_size);
            qp->sq_status = Status::Ok;
            qp->sq_fail_after = true;
            if (report_sends(*qp, out, n)) return true;
            cq.carry = qp;
            return false;
        }
        default:
            return true;  // NO_OP, CUT_OFF (no resize here), UD kinds: nothing of ours
    }
}

Cq::State& checked(const std::shared_ptr<Cq::State>& s) {
    if (!s || !s->live.load(std::memory_order_relaxed))
        throw std::invalid_argument("rig::bnxt::Cq: the completion queue was destroyed or its NIC closed");
    return *s;
}

}  // namespace

void Qp::State::fail() {
    failed.store(true, std::memory_order_release);
    state.store(QpState::Error, std::memory_order_release);
    send_cq->flush_pending.store(true, std::memory_order_release);
    recv_cq->flush_pending.store(true, std::memory_order_release);
}

std::size_t Cq::poll(std::span<Completion> out) {
    State& cq = checked(state_);
    std::size_t n = 0;
    if (cq.carry != nullptr) {
        if (!report_sends(*cq.carry, out, n)) return n;
        cq.carry = nullptr;
    }
    const pci::Window& ring = cq.entries;
    bool consumed = false;
    while (n < out.size()) {
        const std::uint64_t offset = std::uint64_t{cq.cons.index()} * hsi::cqe::bytes;
        // §5.5.4: the toggle first (acquire), the rest only once it says new.
        const std::uint8_t type_toggle = ring.read8(offset + hsi::cqe::toggle_offset, std::memory_order_acquire);
        if (hsi::cqe::toggle.of(type_toggle) != cq.cons.phase()) break;
        std::array<std::byte, hsi::cqe::bytes> bytes;
        ring.read(offset, bytes);
        cq.cons.advance();
        consumed = true;
        if (!take(cq, bytes, type_toggle, out, n)) break;
    }
    if (n < out.size() && cq.flush_pending.load(std::memory_order_acquire)) report_flushes(cq, out, n);
    // §5.5.4, §5.8.2: release the consumed entries; the epoch is the consumer's wrap parity.
    if (consumed) ring_doorbell(cq.doorbells, cq.cons.doorbell(hsi::DbType::CQ, cq.id));
    return n;
}

Result<std::size_t> Cq::wait(std::span<Completion> out, std::chrono::nanoseconds timeout, Notify notify) {
    const auto arm = notify == Notify::Solicited ? hsi::DbType::CQ_ARMSE : hsi::DbType::CQ_ARMALL;
    State& cq = checked(state_);
    Nic::State& nic = *cq.nic;
    if (std::size_t n = poll(out)) return n;
    const auto deadline = nic.clock->now() + timeout;
    for (;;) {
        if (auto why = nic.fn.failed()) return fail(nic.bus, ": the NIC can no longer be reached: ", *why);
        std::uint64_t seen = 0;
        if (nic.interrupts) {
            {
                std::lock_guard lock(nic.nq.mutex);
                if (auto it = nic.nq.counts.find(cq.handle); it != nic.nq.counts.end()) seen = it->second.notifications;
            }
            // §5.6: arm the CQ for its next CQE (or its next solicited one), then look
            // again: a CQE written before the arm raises no notification.
            ring_doorbell(cq.doorbells, cq.cons.doorbell(arm, cq.id));
        }
        if (std::size_t n = poll(out)) return n;
        if (nic.clock->now() >= deadline) return std::size_t{0};
        if (nic.interrupts) wait_nq(nic, cq.handle, seen, deadline);
        else nic.clock->pause();
        if (std::size_t n = poll(out)) return n;
        if (nic.clock->now() >= deadline) return std::size_t{0};
    }
}

}  // namespace rig::bnxt

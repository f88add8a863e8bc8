// Cq::poll and Cq::wait: the hot path that turns CQEs into Completions (rig/bnxt/cq.hpp;
// docs/hsi.md §5.5, §5.6, §5.8).
//
// One pass: first the rest of a requester CQE the last call had no room for (carry), then
// every new CQE while `out` has room, then, where a queue pair of this Cq failed, its
// flushed entries; finally one CQ doorbell releasing what was consumed. Nothing here
// allocates, locks or builds a string. The queue pairs are the list the control path
// published (state.hpp, Cq::State::set_qps); poll_seq brackets each pass so that a Qp is
// not let go while a pass may hold it.
//
// A CQE is input from the device, and every index and code in it is checked against what
// the driver posted before anything is reported (Linux's bnxt_qplib_cq_process_req and
// _res_rc check the same indexes): a CQE of a type no queue of this Cq produces (only
// REQ, RES_RC, TERMINAL and NO_OP are), a status neither table lists, a requester or
// terminal sq_cons_idx beyond the ring or beyond the work requests posted, a requester
// CQE that completes nothing, a responder CQE with no receive outstanding, naming another
// RQ WQE than the oldest, for an SRQ, or longer than its receive, or a CQE for a queue
// pair that completes on another Cq. Such a CQE is a device error: it is recorded (bytes,
// index and why), the Cq reads no further CQE, every queue pair of the Cq fails and flushes,
// and Cq::error and Cq::wait report it. A CQE naming a queue pair the Cq does not hold
// (destroyed, or never) is dropped, as Linux's __clean_cq lets a destroyed QP's go.
#include <array>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "doorbell.hpp"
#include "rig/bnxt/cq.hpp"
#include "rig/text.hpp"
#include "rig/little_endian.hpp"
#include "state.hpp"

namespace rig::bnxt {
namespace {

Qp::State* find(const QpList& list, std::uint64_t handle) {
    for (Qp::State* qp : list.qps)
        if (qp->handle == handle) return qp;
    return nullptr;
}

bool holds(const QpList& list, const Qp::State* qp) {
    for (const Qp::State* q : list.qps)
        if (q == qp) return true;
    return false;
}

// Reports the send-queue entries before sq_done_until: the signalled ones, and the last
// with the CQE's status where it failed (§5.5.1). false where `out` filled first.
[[gnu::always_inline]] inline bool report_sends(Qp::State& qp, std::span<Completion> out, std::size_t& n) {
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
            Completion& c = out[n++];  // field by field: no temporary to copy
            c.id = e.id;
            c.op = e.op;
            c.status = error ? qp.sq_status : Status::Ok;
            c.code = error ? qp.sq_code : std::uint8_t{0};
            c.bytes = e.bytes;
            c.immediate.reset();
            c.qpn = qp.qpn;
        }
        ++r;
    }
    qp.sq_retired.store(r, std::memory_order_release);
    if (qp.sq_status != Status::Ok || qp.sq_fail_after) qp.fail();
    return true;
}

// §5.5.3, §5.2.5: every entry of a failed queue pair not yet reported, with Flushed.
void report_flushes(Cq::State& cq, const QpList& list, std::span<Completion> out, std::size_t& n) {
    for (Qp::State* qp : list.qps) {
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

// The CQE at `offset` of the ring at `base` (mapped: DmaBuffer::allocate) where the device
// has written it for the consumer's `phase`: §5.5.4, its toggle byte first (acquire), the
// rest only once it says new. false: not written yet.
bool read_cqe(std::byte* base, std::uint64_t offset, unsigned phase, std::uint8_t& type_toggle,
              std::array<std::byte, hsi::cqe::bytes>& bytes) {
    type_toggle =
        std::atomic_ref<std::uint8_t>(*reinterpret_cast<std::uint8_t*>(base + offset + hsi::cqe::toggle_offset))
            .load(std::memory_order_acquire);
    if (hsi::cqe::toggle.of(type_toggle) != phase) return false;
    std::memcpy(bytes.data(), base + offset, bytes.size());
    return true;
}

enum class Took : std::uint8_t { All, Full, Invalid };

// One CQE: wholly reported (All), `out` filled first (Full, the rest in cq.carry), or
// refused (Invalid, cq.bad.why says why).
Took take(Cq::State& cq, const QpList& list, std::span<const std::byte, hsi::cqe::bytes> bytes,
          std::uint8_t type_toggle, std::span<Completion> out, std::size_t& n) {
    auto invalid = [&](const char* why) {
        cq.bad.why = why;
        return Took::Invalid;
    };
    // The send queue up to sq_cons_idx (§5.5.1): where it lies beyond the ring or beyond
    // what was posted, nullopt.
    auto sends_until = [](const Qp::State& qp, std::uint16_t sq_cons_idx) -> std::optional<std::uint64_t> {
        if (sq_cons_idx >= qp.sq_size) return std::nullopt;
        const std::uint64_t until =
            detail::completed_until(qp.sq_retired.load(std::memory_order_relaxed), sq_cons_idx, qp.sq_size);
        if (until > qp.sq_posted.load(std::memory_order_acquire)) return std::nullopt;
        return until;
    };
    switch (static_cast<hsi::CqeType>(hsi::cqe::cqe_type.of(type_toggle))) {
    case hsi::CqeType::REQ: {
        const auto c = little_endian::load<hsi::CqeReq>(bytes);
        Qp::State* qp = find(list, c.qp_handle);
        if (qp == nullptr) return Took::All;  // destroyed: its CQEs are dropped
        if (qp->send_cq.get() != &cq) return invalid("a requester CQE for a queue pair whose sends complete elsewhere");
        // OK, the common code, without the table's call.
        const Status status =
            c.status == static_cast<std::uint8_t>(hsi::CqeReqStatus::OK) ? Status::Ok : requester_status(c.status);
        if (status == Status::Unknown) return invalid("a requester status no table lists");
        if (qp->failed.load(std::memory_order_relaxed)) return Took::All;  // flushed already
        const auto until = sends_until(*qp, c.sq_cons_idx);
        if (!until) return invalid("sq_cons_idx beyond the send queue or the work requests posted");
        if (*until == qp->sq_retired.load(std::memory_order_relaxed))
            return invalid("a requester CQE that completes no work request");
        qp->sq_done_until = *until;
        qp->sq_status = status;
        qp->sq_code = c.status;
        if (report_sends(*qp, out, n)) return Took::All;
        cq.carry = qp;
        return Took::Full;
    }
    case hsi::CqeType::RES_RC: {
        const auto c = little_endian::load<hsi::CqeResRc>(bytes);
        Qp::State* qp = find(list, c.qp_handle);
        if (qp == nullptr) return Took::All;
        if (qp->recv_cq.get() != &cq)
            return invalid("a responder CQE for a queue pair whose receives complete elsewhere");
        const Status status =
            c.status == static_cast<std::uint8_t>(hsi::CqeResStatus::OK) ? Status::Ok : responder_status(c.status);
        if (status == Status::Unknown) return invalid("a responder status no table lists");
        if (hsi::cqe_res_flags::SRQ.of(c.flags) != 0) return invalid("a responder CQE of a shared receive queue");
        if (qp->failed.load(std::memory_order_relaxed)) return Took::All;
        const std::uint64_t r = qp->rq_retired.load(std::memory_order_relaxed);
        if (r >= qp->rq_posted.load(std::memory_order_acquire))
            return invalid("a responder CQE with no receive outstanding");
        // §5.3: receives complete in RQ order; the tag names the oldest.
        if (hsi::cqe_res_flags::srq_or_rq_wr_id.of(c.srq_or_rq_wr_id) != r % qp->rq_size)
            return invalid("a responder CQE naming another receive than the oldest outstanding");
        const RecvEntry& e = qp->rq_shadow[r % qp->rq_size];
        if (status == Status::Ok && c.length > e.bytes) return invalid("a receive longer than the bytes posted for it");
        std::optional<std::uint32_t> immediate;
        if (hsi::cqe_res_flags::IMM.of(c.flags) != 0) immediate = c.imm_data_or_inv_r_key.get();
        out[n++] = Completion{e.id, Op::Recv, status, c.status, c.length, immediate, qp->qpn};
        qp->rq_retired.store(r + 1, std::memory_order_release);
        if (status != Status::Ok) qp->fail();
        return Took::All;
    }
    case hsi::CqeType::TERMINAL: {
        // §5.5.3: the WQEs before sq_cons_idx succeeded; the rest flush.
        const auto c = little_endian::load<hsi::CqeTerminal>(bytes);
        Qp::State* qp = find(list, c.qp_handle);
        if (qp == nullptr) return Took::All;
        if (qp->send_cq.get() != &cq) return invalid("a terminal CQE for a queue pair whose sends complete elsewhere");
        if (qp->failed.load(std::memory_order_relaxed)) return Took::All;
        const auto until = sends_until(*qp, c.sq_cons_idx);
        if (!until || (c.rq_cons_idx != hsi::cqe_terminal::rq_cons_idx_none && c.rq_cons_idx >= qp->rq_size))
            return invalid("a terminal CQE's consumer indexes beyond the queues or the work requests posted");
        qp->sq_done_until = *until;
        qp->sq_status = Status::Ok;
        qp->sq_fail_after = true;
        if (report_sends(*qp, out, n)) return Took::All;
        cq.carry = qp;
        return Took::Full;
    }
    case hsi::CqeType::NO_OP: return Took::All;
    default: return invalid("a CQE of a type no queue of this CQ produces");  // CUT_OFF (no resize), UD, raw
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
    // poll_seq odd while this pass may hold the list (Cq::State::set_qps waits for it).
    cq.poll_seq.fetch_add(1, std::memory_order_seq_cst);
    const QpList& list = *cq.published.load(std::memory_order_seq_cst);
    std::size_t n = 0;
    bool consumed = false;
    if (cq.carry != nullptr && !holds(list, cq.carry)) cq.carry = nullptr;  // destroyed meanwhile
    if (cq.carry == nullptr || report_sends(*cq.carry, out, n)) {
        cq.carry = nullptr;
        std::byte* const base = cq.entries.data();
        while (n < out.size() && !cq.device_error.load(std::memory_order_relaxed)) {
            const std::uint64_t offset = std::uint64_t{cq.cons.index()} * hsi::cqe::bytes;
            std::uint8_t type_toggle = 0;
            std::array<std::byte, hsi::cqe::bytes> bytes;
            if (!read_cqe(base, offset, cq.cons.phase(), type_toggle, bytes)) break;
            const Took took = take(cq, list, bytes, type_toggle, out, n);
            if (took == Took::Invalid) {
                // A device error: the CQE stays unconsumed, the Cq reads no more, and every
                // queue pair of it fails and flushes.
                cq.bad.bytes = bytes;
                cq.bad.index = cq.cons.index();
                for (Qp::State* qp : list.qps) qp->fail();
                cq.device_error.store(true, std::memory_order_release);
                break;
            }
            cq.cons.advance();
            consumed = true;
            if (took == Took::Full) break;
        }
        if (n < out.size() && cq.flush_pending.load(std::memory_order_acquire)) report_flushes(cq, list, out, n);
    }
    // §5.5.4, §5.8.2: release the consumed entries; the epoch is the consumer's wrap parity.
    if (consumed) ring_doorbell(cq.doorbells, cq.cons.doorbell(hsi::DbType::CQ, cq.id));
    cq.poll_seq.fetch_add(1, std::memory_order_release);
    return n;
}

std::optional<std::string> Cq::error() const {
    if (!state_ || !state_->device_error.load(std::memory_order_acquire)) return std::nullopt;
    const State& cq = *state_;
    std::string bytes;
    for (std::size_t i = 0; i < cq.bad.bytes.size(); ++i) {
        static constexpr char digits[] = "0123456789abcdef";
        const auto b = std::to_integer<unsigned>(cq.bad.bytes[i]);
        if (i != 0 && i % 8 == 0) bytes += ' ';
        bytes += digits[b >> 4];
        bytes += digits[b & 0xF];
    }
    return cq.nic->bus + ": CQ " + std::to_string(cq.id) + ": the NIC wrote an invalid CQE at index " +
           std::to_string(cq.bad.index) + " (" + cq.bad.why + "): " + bytes +
           "; the CQ takes no more CQEs and its queue pairs are in error";
}

Result<std::size_t> Cq::wait(std::span<Completion> out, std::chrono::nanoseconds timeout, Notify notify) {
    const auto arm = notify == Notify::Solicited ? hsi::DbType::CQ_ARMSE : hsi::DbType::CQ_ARMALL;
    State& cq = checked(state_);
    Nic::State& nic = *cq.nic;
    if (std::size_t n = poll(out)) return n;
    const auto deadline = nic.clock->now() + timeout;
    for (;;) {
        if (auto why = nic.fn.failed()) return fail(nic.bus, ": the NIC can no longer be reached: ", *why);
        if (auto bad = error()) return std::unexpected(std::move(*bad));
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

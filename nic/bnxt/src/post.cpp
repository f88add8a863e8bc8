// Posting work requests: the hot path of rig/bnxt/qp.hpp (docs/hsi.md §5.2.5, §5.3,
// §5.4, §5.8).
//
// A post checks the request (a caller's bug throws before anything is queued), takes a
// free entry or returns false, records the caller's id in the shadow entry, writes the
// WQE's used slots in one copy and, for a send queue, the PSN search entry, publishes the
// posted count (release: the poller reads the shadow entry after it), and rings the
// doorbell with the new producer index and its epoch. On a queue pair in Error nothing
// reaches the NIC: the entry is queued for the poller to flush (§5.2.5 step 1). No
// allocation, lock or string on the way that queues.
#include <array>
#include <stdexcept>
#include <string>

#include "doorbell.hpp"
#include "rig/bnxt/detail/work_request.hpp"
#include "rig/bnxt/qp.hpp"
#include "state.hpp"

namespace rig::bnxt {
namespace {

// Messages are built only on the way to a throw.
[[noreturn]] void refuse(const char* call, const std::string& why) {
    throw std::invalid_argument(std::string("rig::bnxt::Qp::") + call + ": " + why);
}

constexpr std::uint64_t max_message_bytes = std::uint64_t{1} << 31;  // RoCE's 2 GiB

Qp::State& live_qp(const std::shared_ptr<Qp::State>& s, const char* call) {
    if (!s || !s->live.load(std::memory_order_relaxed)) refuse(call, "the queue pair was destroyed or its NIC closed");
    return *s;
}

void check_sendable(const Qp::State& qp, const char* call) {
    const QpState state = qp.state.load(std::memory_order_acquire);
    if (state != QpState::Rts && state != QpState::Error) refuse(call, "the queue pair is not connected (RTS)");
}

// The region's bytes [offset, offset + bytes) as one SGE.
detail::SgeRef sge_of(const Qp::State& qp, const Region& region, std::uint64_t offset, std::uint64_t bytes,
                      const char* call) {
    const auto& r = region.state();
    if (!r || !r->usable.load(std::memory_order_relaxed)) refuse(call, "the region is deregistered");
    if (r->nic != qp.nic) refuse(call, "the region belongs to another NIC");
    if (offset > r->bytes || bytes > r->bytes - offset)
        refuse(call, std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + " do not lie in a region of " +
                         std::to_string(r->bytes) + " bytes");
    if (bytes >= max_message_bytes) refuse(call, std::to_string(bytes) + " bytes is not below the 2 GiB RoCE message limit");
    return detail::SgeRef{r->va + offset, r->key, static_cast<std::uint32_t>(bytes)};
}

// Queues one send-queue WQE that `build` writes; false where the queue is full.
template <class Build>
bool post_send(Qp::State& qp, hsi::WqeType type, Op op, std::uint32_t bytes, std::uint64_t id, Signal signal,
               Build&& build) {
    const std::uint64_t count = qp.sq_count;
    if (count - qp.sq_retired.load(std::memory_order_acquire) >= qp.depths.send) return false;
    const std::uint32_t index = qp.sq_prod.index();
    qp.sq_shadow[index] = SendEntry{id, bytes, op, signal == Signal::Yes};
    const bool failed = qp.failed.load(std::memory_order_acquire);
    if (!failed) {
        alignas(16) std::array<std::byte, hsi::wqe::bytes> wqe;
        const std::size_t used = build(detail::WqeBytes(wqe));
        qp.sq_ring.write(std::uint64_t{index} * hsi::wqe::bytes, std::span<const std::byte>(wqe.data(), used));
        // §5.2.5, §5.4: this WQE's PSNs.
        const std::uint32_t start = qp.next_psn;
        qp.next_psn = (start + hsi::npkts(bytes, qp.mtu_bytes)) & hsi::psn_mask;
        std::array<std::byte, hsi::psn_search::entry_bytes> psn;
        detail::encode_psn(psn, type, start, qp.next_psn, index);
        qp.sq_ring.write(hsi::psn_search_offset(qp.sq_size, index), psn);
    }
    qp.sq_prod.advance();
    qp.sq_count = count + 1;
    qp.sq_posted.store(count + 1, std::memory_order_release);
    if (!failed) ring_doorbell(qp.doorbells, qp.sq_prod.doorbell(hsi::DbType::SQ, qp.qpn));
    return true;
}

}  // namespace

bool Qp::send(const Region& region, std::uint64_t offset, std::uint64_t bytes, std::uint64_t id, Signal signal,
              std::optional<std::uint32_t> immediate, Solicit solicit) {
    State& qp = live_qp(state_, "send");
    check_sendable(qp, "send");
    const detail::SgeRef sge = sge_of(qp, region, offset, bytes, "send");
    const bool signalled = signal == Signal::Yes;
    const auto type = immediate ? hsi::WqeType::SEND_WITH_IMMEDIATE : hsi::WqeType::SEND;
    return post_send(qp, type, Op::Send, sge.size, id, signal,
                     [&](detail::WqeBytes w) {
                         return detail::encode_send(w, signalled, immediate, sge, solicit == Solicit::Yes);
                     });
}

bool Qp::send_inline(std::span<const std::byte> data, std::uint64_t id, Signal signal,
                     std::optional<std::uint32_t> immediate, Solicit solicit) {
    State& qp = live_qp(state_, "send_inline");
    check_sendable(qp, "send_inline");
    if (data.size() > qp.max_inline)
        refuse("send_inline", std::to_string(data.size()) + " bytes is more than the NIC's inline limit of " +
                                  std::to_string(qp.max_inline) + " (QUERY_FUNC max_inline_data)");
    const bool signalled = signal == Signal::Yes;
    const auto type = immediate ? hsi::WqeType::SEND_WITH_IMMEDIATE : hsi::WqeType::SEND;
    return post_send(qp, type, Op::Send, static_cast<std::uint32_t>(data.size()), id, signal,
                     [&](detail::WqeBytes w) {
                         return detail::encode_send_inline(w, signalled, immediate, data, solicit == Solicit::Yes);
                     });
}

bool Qp::read(const Region& region, std::uint64_t offset, Remote remote, std::uint64_t bytes, std::uint64_t id,
              Signal signal) {
    State& qp = live_qp(state_, "read");
    check_sendable(qp, "read");
    const detail::SgeRef sge = sge_of(qp, region, offset, bytes, "read");
    const bool signalled = signal == Signal::Yes;
    return post_send(qp, hsi::WqeType::RDMA_READ, Op::Read, sge.size, id, signal, [&](detail::WqeBytes w) {
        return detail::encode_read(w, signalled, remote.address, remote.rkey, sge);
    });
}

bool Qp::recv(const Region& region, std::uint64_t offset, std::uint64_t bytes, std::uint64_t id) {
    State& qp = live_qp(state_, "recv");
    const detail::SgeRef sge = sge_of(qp, region, offset, bytes, "recv");
    const std::uint64_t count = qp.rq_count;
    if (count - qp.rq_retired.load(std::memory_order_acquire) >= qp.depths.recv) return false;
    const std::uint32_t index = qp.rq_prod.index();
    qp.rq_shadow[index] = RecvEntry{id, sge.size};
    const bool failed = qp.failed.load(std::memory_order_acquire);
    if (!failed) {
        alignas(16) std::array<std::byte, hsi::wqe::bytes> wqe;
        // §5.3: the tag is the RQ index, returned in the responder CQE.
        const std::size_t used = detail::encode_recv(wqe, index, sge);
        qp.rq_ring.write(std::uint64_t{index} * hsi::wqe::bytes, std::span<const std::byte>(wqe.data(), used));
    }
    qp.rq_prod.advance();
    qp.rq_count = count + 1;
    qp.rq_posted.store(count + 1, std::memory_order_release);
    if (failed) return true;
    // §4.6.9: before RTR the RQ doorbell waits for connect.
    const QpState state = qp.state.load(std::memory_order_acquire);
    if (state == QpState::Rtr || state == QpState::Rts) ring_doorbell(qp.doorbells, qp.rq_prod.doorbell(hsi::DbType::RQ, qp.qpn));
    else qp.rq_doorbell_deferred = true;
    return true;
}

}  // namespace rig::bnxt

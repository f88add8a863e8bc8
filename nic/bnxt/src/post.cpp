// Posting work requests: the hot path of rig/bnxt/qp.hpp (docs/hsi.md §5.2.5, §5.3,
// §5.4, §5.8).
//
// A post first checks every request (a caller's bug throws before anything is queued),
// then takes as many as the queue has room for, in order. For each it records the
// caller's id in the shadow entry and builds the WQE (and, for a send queue, the PSN
// search entry) in place in the ring, which is mapped into the process
// (DmaBuffer::allocate). Then it
// publishes the posted count (release: the poller reads the shadow entries after it) and
// rings the doorbell once with the new producer index and its epoch. On a queue pair in
// Error nothing reaches the NIC: the entries are queued for the poller to flush (§5.2.5
// step 1). No allocation, lock or string on the way that queues.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "doorbell.hpp"
#include "rig/bnxt/detail/work_request.hpp"
#include "rig/bnxt/qp.hpp"
#include "state.hpp"

namespace rig::bnxt {
namespace {

// Messages are built only on the way to a throw.
[[noreturn, gnu::cold, gnu::noinline]] void refuse(const char* what, std::size_t index, const std::string& why) {
    throw std::invalid_argument(std::string("rig::bnxt::Qp::post: ") + what + " " + std::to_string(index) + ": " + why);
}

[[noreturn, gnu::cold, gnu::noinline]] void refuse(const std::string& why) {
    throw std::invalid_argument("rig::bnxt::Qp::post: " + why);
}

const Region::State* region_state(const Region& region) { return Handles::of(region).get(); }

constexpr std::uint64_t max_message_bytes = std::uint64_t{1} << 31;  // RoCE's 2 GiB

Qp::State& live_qp(const std::shared_ptr<Qp::State>& s) {
    if (!s || !s->live.load(std::memory_order_relaxed)) refuse("the queue pair was destroyed or its NIC closed");
    return *s;
}

void check_sendable(const Qp::State& qp) {
    const QpState state = qp.state.load(std::memory_order_acquire);
    if (state != QpState::Rts && state != QpState::Error) refuse("the queue pair is not connected (RTS)");
}

[[noreturn, gnu::cold, gnu::noinline]] void refuse_bytes(const char* what, std::size_t index, std::uint64_t offset,
                                                         std::uint64_t bytes, std::uint64_t region_bytes) {
    if (offset > region_bytes || bytes > region_bytes - offset)
        refuse(what, index,
               std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + " do not lie in a region of " +
                   std::to_string(region_bytes) + " bytes");
    refuse(what, index, std::to_string(bytes) + " bytes is not below the 2 GiB RoCE message limit");
}

// Throws unless [offset, offset + bytes) of `region` may carry the request. Compares
// only; the messages are built out of line.
[[gnu::always_inline]] inline void check_bytes(const Qp::State& qp, const Region* region, std::uint64_t offset,
                                               std::uint64_t bytes, const char* what, std::size_t index) {
    if (region == nullptr) [[unlikely]]
        refuse(what, index, "no region");
    const Region::State* r = region_state(*region);
    if (r == nullptr || !r->usable.load(std::memory_order_relaxed)) [[unlikely]]
        refuse(what, index, "the region is deregistered");
    if (r->nic.get() != qp.nic.get()) [[unlikely]]
        refuse(what, index, "the region belongs to another NIC");
    if (offset > r->bytes || bytes > r->bytes - offset || bytes >= max_message_bytes) [[unlikely]]
        refuse_bytes(what, index, offset, bytes, r->bytes);
}

[[gnu::always_inline]] inline void check(const Qp::State& qp, const Send& s, std::size_t index) {
    if (s.region == nullptr) [[unlikely]] {
        if (s.offset != 0 || s.bytes != 0)
            refuse("send", index, "offset and bytes name a region's bytes, and there is no region");
        if (s.inline_data.size() > qp.max_inline)
            refuse("send", index,
                   std::to_string(s.inline_data.size()) + " inline bytes is more than the NIC's inline limit of " +
                       std::to_string(qp.max_inline) + " (QUERY_FUNC max_inline_data)");
        return;
    }
    if (!s.inline_data.empty()) [[unlikely]]
        refuse("send", index, "both a region and inline data");
    check_bytes(qp, s.region, s.offset, s.bytes, "send", index);
}

[[gnu::always_inline]] inline void check(const Qp::State& qp, const Read& r, std::size_t index) {
    check_bytes(qp, r.region, r.offset, r.bytes, "read", index);
}

[[gnu::always_inline]] inline void check(const Qp::State& qp, const Recv& r, std::size_t index) {
    check_bytes(qp, r.region, r.offset, r.bytes, "receive", index);
}

// The region's bytes [offset, offset + bytes) as one SGE; checked already.
detail::SgeRef sge_of(const Region& region, std::uint64_t offset, std::uint64_t bytes) {
    const Region::State& r = *region_state(region);
    return detail::SgeRef{r.va + offset, r.key, static_cast<std::uint32_t>(bytes)};
}

// What a send-queue request puts in its shadow entry and WQE.
SendEntry entry_of(const Send& s) {
    const std::uint64_t bytes = s.region != nullptr ? s.bytes : s.inline_data.size();
    return SendEntry{s.id, static_cast<std::uint32_t>(bytes), Op::Send, s.signalled == Signal::Yes};
}
SendEntry entry_of(const Read& r) {
    return SendEntry{r.id, static_cast<std::uint32_t>(r.bytes), Op::Read, r.signalled == Signal::Yes};
}

hsi::WqeType type_of(const Send& s) { return s.immediate ? hsi::WqeType::SEND_WITH_IMMEDIATE : hsi::WqeType::SEND; }
hsi::WqeType type_of(const Read&) { return hsi::WqeType::RDMA_READ; }

std::size_t encode(detail::WqeBytes wqe, const Send& s) {
    const bool signalled = s.signalled == Signal::Yes;
    const bool solicited = s.solicited == Solicit::Yes;
    if (s.region == nullptr) return detail::encode_send_inline(wqe, signalled, s.immediate, s.inline_data, solicited);
    return detail::encode_send(wqe, signalled, s.immediate, sge_of(*s.region, s.offset, s.bytes), solicited);
}
std::size_t encode(detail::WqeBytes wqe, const Read& r) {
    return detail::encode_read(wqe, r.signalled == Signal::Yes, r.remote.address, r.remote.rkey,
                               sge_of(*r.region, r.offset, r.bytes));
}

// Queues the first of `requests` the send queue has room for; how many.
template <class Request>
std::size_t post_send(Qp::State& qp, std::span<const Request> requests) {
    const std::uint64_t count = qp.sq_count;
    const std::uint64_t room = qp.depths.send - (count - qp.sq_retired.load(std::memory_order_acquire));
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(requests.size(), room));
    if (n == 0) return 0;
    const bool failed = qp.failed.load(std::memory_order_acquire);
    std::byte* const wqes = qp.sq_ring.data();  // mapped: DmaBuffer::allocate
    std::byte* const psns = wqes + hsi::psn_search_offset(qp.sq_size, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
        const Request& r = requests[i];
        const SendEntry e = entry_of(r);
        const std::uint32_t index = qp.sq_prod.index();
        qp.sq_shadow[index] = e;
        qp.sq_prod.advance();
        if (failed) continue;
        encode(detail::WqeBytes(wqes + std::size_t{index} * hsi::wqe::bytes, hsi::wqe::bytes), r);
        // §5.2.5, §5.4: this WQE's PSNs.
        const std::uint32_t start = qp.next_psn;
        qp.next_psn = (start + hsi::npkts(e.bytes, qp.mtu_bytes)) & hsi::psn_mask;
        detail::encode_psn(std::span<std::byte, hsi::psn_search::entry_bytes>(
                               psns + std::size_t{index} * hsi::psn_search::entry_bytes, hsi::psn_search::entry_bytes),
                           type_of(r), start, qp.next_psn, index);
    }
    qp.sq_count = count + n;
    qp.sq_posted.store(count + n, std::memory_order_release);
    if (!failed) ring_doorbell(qp.doorbells, qp.sq_prod.doorbell(hsi::DbType::SQ, qp.qpn));
    return n;
}

}  // namespace

std::size_t Qp::post(std::span<const Send> sends) {
    State& qp = live_qp(state_);
    check_sendable(qp);
    for (std::size_t i = 0; i < sends.size(); ++i) check(qp, sends[i], i);
    return post_send(qp, sends);
}

std::size_t Qp::post(std::span<const Read> reads) {
    State& qp = live_qp(state_);
    check_sendable(qp);
    for (std::size_t i = 0; i < reads.size(); ++i) check(qp, reads[i], i);
    return post_send(qp, reads);
}

std::size_t Qp::post(std::span<const Recv> recvs) {
    State& qp = live_qp(state_);
    for (std::size_t i = 0; i < recvs.size(); ++i) check(qp, recvs[i], i);
    const std::uint64_t count = qp.rq_count;
    const std::uint64_t room = qp.depths.recv - (count - qp.rq_retired.load(std::memory_order_acquire));
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(recvs.size(), room));
    if (n == 0) return 0;
    const bool failed = qp.failed.load(std::memory_order_acquire);
    std::byte* const wqes = qp.rq_ring.data();  // mapped: DmaBuffer::allocate
    for (std::uint32_t i = 0; i < n; ++i) {
        const Recv& r = recvs[i];
        const std::uint32_t index = qp.rq_prod.index();
        qp.rq_shadow[index] = RecvEntry{r.id, static_cast<std::uint32_t>(r.bytes)};
        qp.rq_prod.advance();
        if (failed) continue;
        // §5.3: the tag is the RQ index, returned in the responder CQE.
        detail::encode_recv(detail::WqeBytes(wqes + std::size_t{index} * hsi::wqe::bytes, hsi::wqe::bytes), index,
                            sge_of(*r.region, r.offset, r.bytes));
    }
    qp.rq_count = count + n;
    qp.rq_posted.store(count + n, std::memory_order_release);
    if (failed) return n;
    // §4.6.9: before RTR the RQ doorbell waits for connect.
    const QpState state = qp.state.load(std::memory_order_acquire);
    if (state == QpState::Rtr || state == QpState::Rts)
        ring_doorbell(qp.doorbells, qp.rq_prod.doorbell(hsi::DbType::RQ, qp.qpn));
    else qp.rq_doorbell_deferred = true;
    return n;
}

}  // namespace rig::bnxt

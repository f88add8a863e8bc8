// Completion queues: create, destroy, status words (rig/bnxt/cq.hpp; docs/hsi.md
// §4.6.6, §4.6.7, §5.5). Polling is poll.cpp's, the notification queue nq.cpp's.
#include "rig/bnxt/cq.hpp"

#include <stdexcept>
#include <thread>

#include "doorbell.hpp"
#include "rig/text.hpp"
#include "state.hpp"

namespace rig::bnxt {

std::string_view to_string(Op op) {
    switch (op) {
    case Op::Send: return "send";
    case Op::Read: return "read";
    case Op::Recv: return "recv";
    }
    return "?";
}

std::string_view to_string(Status status) {
    switch (status) {
    case Status::Ok: return "OK";
    case Status::BadResponse: return "BAD_RESPONSE_ERR";
    case Status::LocalLength: return "LOCAL_LENGTH_ERR";
    case Status::LocalQpOperation: return "LOCAL_QP_OPERATION_ERR";
    case Status::LocalProtection: return "LOCAL_PROTECTION_ERR";
    case Status::LocalAccess: return "LOCAL_ACCESS_ERROR";
    case Status::MemoryManagement: return "MEMORY_MGT_OPERATION_ERR";
    case Status::RemoteInvalidRequest: return "REMOTE_INVALID_REQUEST_ERR";
    case Status::RemoteAccess: return "REMOTE_ACCESS_ERR";
    case Status::RemoteOperation: return "REMOTE_OPERATION_ERR";
    case Status::RnrRetryExceeded: return "RNR_NAK_RETRY_CNT_ERR";
    case Status::TransportRetryExceeded: return "TRANSPORT_RETRY_CNT_ERR";
    case Status::Flushed: return "WORK_REQUEST_FLUSHED_ERR";
    case Status::HardwareFlush: return "HW_FLUSH_ERR";
    case Status::Unknown: return "unknown status";
    }
    return "unknown status";
}

// §5.5.1.
Status requester_status(std::uint8_t code) {
    using S = hsi::CqeReqStatus;
    switch (static_cast<S>(code)) {
    case S::OK: return Status::Ok;
    case S::BAD_RESPONSE_ERR: return Status::BadResponse;
    case S::LOCAL_LENGTH_ERR: return Status::LocalLength;
    case S::LOCAL_QP_OPERATION_ERR: return Status::LocalQpOperation;
    case S::LOCAL_PROTECTION_ERR: return Status::LocalProtection;
    case S::MEMORY_MGT_OPERATION_ERR: return Status::MemoryManagement;
    case S::REMOTE_INVALID_REQUEST_ERR: return Status::RemoteInvalidRequest;
    case S::REMOTE_ACCESS_ERR: return Status::RemoteAccess;
    case S::REMOTE_OPERATION_ERR: return Status::RemoteOperation;
    case S::RNR_NAK_RETRY_CNT_ERR: return Status::RnrRetryExceeded;
    case S::TRANSPORT_RETRY_CNT_ERR: return Status::TransportRetryExceeded;
    case S::WORK_REQUEST_FLUSHED_ERR: return Status::Flushed;
    }
    return Status::Unknown;
}

// §5.5.2.
Status responder_status(std::uint8_t code) {
    using S = hsi::CqeResStatus;
    switch (static_cast<S>(code)) {
    case S::OK: return Status::Ok;
    case S::LOCAL_ACCESS_ERROR: return Status::LocalAccess;
    case S::LOCAL_LENGTH_ERR: return Status::LocalLength;
    case S::LOCAL_PROTECTION_ERR: return Status::LocalProtection;
    case S::LOCAL_QP_OPERATION_ERR: return Status::LocalQpOperation;
    case S::MEMORY_MGT_OPERATION_ERR: return Status::MemoryManagement;
    case S::REMOTE_INVALID_REQUEST_ERR: return Status::RemoteInvalidRequest;
    case S::WORK_REQUEST_FLUSHED_ERR: return Status::Flushed;
    case S::HW_FLUSH_ERR: return Status::HardwareFlush;
    }
    return Status::Unknown;
}

Result<Cq> Cq::create(const Nic& nic, std::uint32_t depth) {
    const auto& n = Handles::of(nic);
    if (!n || n->closed.load(std::memory_order_acquire))
        throw std::invalid_argument("rig::bnxt::Cq::create: the NIC is closed");
    if (depth == 0 || depth > n->limits.max_cqe)
        throw std::invalid_argument("rig::bnxt::Cq::create: a depth of " + std::to_string(depth) + " is not in 1.." +
                                    std::to_string(n->limits.max_cqe) + " (QUERY_FUNC max_cqe - 1)");
    auto cq = std::make_shared<State>();
    cq->nic = n;
    cq->depth = depth;
    cq->size = depth + 1;  // room for depth completions beside the one the consumer index names
    auto ring = allocate_queue(n->fn, std::uint64_t{cq->size} * hsi::cqe::bytes, poison_device_writes, "CQ");
    if (!ring) return std::unexpected(std::move(ring).error());
    cq->ring = std::move(*ring);
    cq->entries = cq->ring.memory.window();
    cq->doorbells = n->doorbells;
    cq->cons = detail::RingPosition(cq->size);

    std::lock_guard lock(n->mutex);
    if (n->closed.load(std::memory_order_acquire))
        throw std::invalid_argument("rig::bnxt::Cq::create: the NIC is closed");
    cq->handle = n->next_handle++;
    // §4.6.6, §7.2 step 2.
    hsi::CreateCq command{};
    command.cq_handle = cq->handle;
    command.pg_size_lvl = static_cast<std::uint32_t>(
        hsi::create_cq::lvl(static_cast<std::uint8_t>(cq->ring.pages.level)) | hsi::create_cq::pg_size(pg_code_4k));
    command.cq_fco_cnq_id = static_cast<std::uint32_t>(hsi::create_cq::cnq_id(n->nq.ring_id));
    command.dpi = 0;  // the privileged page (§5.8.4: mainline's numbering)
    command.cq_size = cq->size;
    command.pbl = cq->ring.pages.base;
    auto done = n->rcfw->call(hsi::Opcode::CREATE_CQ, command);
    if (!done) return std::unexpected(std::move(done).error());
    cq->id = done->xid;
    cq->live.store(true, std::memory_order_release);
    {
        std::lock_guard nq_lock(n->nq.mutex);
        n->nq.counts[cq->handle] = Nq::Count{cq->id, 0};
    }
    ring_doorbell(cq->doorbells, hsi::encode(hsi::DbType::CQ_ARMENA, cq->id, 0, 0));
    n->cqs.push_back(cq.get());
    return Cq(std::move(cq));
}

Result<void> Cq::State::destroy_locked() {
    if (!live.load(std::memory_order_acquire)) return {};
    Nic::State& n = *nic;
    if (n.rcfw) {
        hsi::DestroyCq command{};
        command.cq_cid = id;
        auto done = n.rcfw->call(hsi::Opcode::DESTROY_CQ, command);
        if (!done) return std::unexpected(std::move(done).error());
        // §4.6.7, §7.4 step 3: the NQ may still hold notifications of this CQ; take them
        // all before the ring goes, bounded by the command timeout.
        const auto total =
            little_endian::load<hsi::CreqDestroyCqCompletion>(little_endian::bytes_of(*done)).total_cnq_events.get();
        const auto deadline = n.clock->now() + n.rcfw->timeout();
        std::unique_lock nq_lock(n.nq.mutex);
        while (n.nq.counts[handle].notifications < total && n.clock->now() < deadline) {
            drain_nq_locked(n);
            if (n.nq.counts[handle].notifications >= total) break;
            nq_lock.unlock();
            n.clock->pause();
            nq_lock.lock();
        }
        n.nq.counts.erase(handle);
    }
    retire(Memory::Free);
    return {};
}

void Cq::State::set_qps(std::vector<Qp::State*> list) {
    auto next = std::make_unique<QpList>(QpList{std::move(list)});
    std::unique_ptr<QpList> old = std::move(qps);
    qps = std::move(next);
    published.store(qps.get(), std::memory_order_seq_cst);
    // A poll that entered before the store may hold the old list: wait until it leaves.
    // One that enters after sees the new one (poll_seq's increment and the store are both
    // seq_cst). The wait ends at the next exit of that one poll, never starved by others.
    const std::uint64_t seen = poll_seq.load(std::memory_order_seq_cst);
    if (seen % 2 == 1)
        while (poll_seq.load(std::memory_order_acquire) == seen) std::this_thread::yield();
}

void Cq::State::retire(Memory memory) {
    if (!live.exchange(false, std::memory_order_acq_rel)) return;
    std::erase(nic->cqs, this);
    for (DmaBuffer* b : {&ring.memory, &ring.pages.table}) {
        if (memory == Memory::KeepUntilClose) nic->kept.push_back(std::move(*b));
        b->reset();
    }
}

Cq::State::~State() {
    if (!nic || !live.load(std::memory_order_acquire)) return;
    std::lock_guard lock(nic->mutex);
    if (!nic->closed.load(std::memory_order_acquire) && live.load(std::memory_order_acquire)) {
        if (!destroy_locked()) retire(Memory::KeepUntilClose);
    }
}

Cq::Cq(std::shared_ptr<State> state) : state_(std::move(state)) {}
Cq::Cq(Cq&&) noexcept = default;
Cq& Cq::operator=(Cq&& other) noexcept {
    if (this != &other) {
        if (state_) (void)destroy();
        state_ = std::move(other.state_);
    }
    return *this;
}
Cq::~Cq() {
    if (state_) (void)destroy();
}

Result<void> Cq::destroy() {
    if (!state_) return {};
    State& cq = *state_;
    std::lock_guard lock(cq.nic->mutex);
    if (cq.nic->closed.load(std::memory_order_acquire) || !cq.live.load(std::memory_order_acquire)) return {};
    if (!cq.qps->qps.empty())
        throw std::invalid_argument("rig::bnxt::Cq::destroy: queue pair " + std::to_string(cq.qps->qps.front()->qpn) +
                                    " still completes on CQ " + std::to_string(cq.id) + "; destroy it first");
    return cq.destroy_locked();
}

std::uint32_t Cq::depth() const { return state_ ? state_->depth : 0; }
std::uint32_t Cq::id() const { return state_ ? state_->id : 0; }

}  // namespace rig::bnxt

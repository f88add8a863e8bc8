// Queue pairs: create, connect, destroy (rig/bnxt/qp.hpp; docs/hsi.md §4.6.8,
// §4.6.9, §4.6.11, §7.2). Posting is post.cpp's.
#include "rig/bnxt/qp.hpp"

#include <algorithm>
#include <stdexcept>

#include "doorbell.hpp"
#include "rig/text.hpp"
#include "state.hpp"

namespace rig::bnxt {
namespace {

// §4.6.9 RC transitions, the values the minimal driver sends (§7.2 steps 6-9).
constexpr std::uint8_t qp_access = hsi::qp_access::LOCAL_WRITE | hsi::qp_access::REMOTE_READ;  // never REMOTE_WRITE
constexpr std::uint16_t pkey_default = 0xFFFF;
constexpr std::uint8_t min_rnr_timer = 12;
constexpr std::uint16_t vlan_untagged = 0xFFF;  // Linux's VID for an untagged GID
constexpr std::uint8_t read_depth_most = 16;    // RDMA READs in flight per direction

std::uint64_t round_page(std::uint64_t n) { return (n + 4095) / 4096 * 4096; }

// A first PSN per queue pair (24 bits); any value is valid (IB: chosen by the requester).
std::uint32_t first_psn(std::uint32_t qpn) { return (qpn * 2654435761u) & hsi::psn_mask; }

hsi::PathMtu mtu_code(Mtu mtu) { return static_cast<hsi::PathMtu>(static_cast<std::uint8_t>(mtu)); }

std::uint8_t with_state(hsi::QpState state, bool ipv4) {
    const auto network = ipv4 ? hsi::NetworkType::ROCE_V2_IPV4 : hsi::NetworkType::ROCE_V2_IPV6;
    return static_cast<std::uint8_t>(hsi::modify_qp::new_state(static_cast<std::uint8_t>(state)) |
                                     hsi::modify_qp::network_type(static_cast<std::uint8_t>(network)));
}

Qp::State& checked(const std::shared_ptr<Qp::State>& s, const char* call) {
    if (!s || !s->live.load(std::memory_order_acquire))
        throw std::invalid_argument(std::string("rig::bnxt::Qp::") + call +
                                    ": the queue pair was destroyed or its NIC closed");
    return *s;
}

}  // namespace

Result<Qp> Qp::create(const Nic& nic, Cq& send_cq, Cq& recv_cq, Depths depths) {
    const auto& n = Handles::of(nic);
    if (!n || n->closed.load(std::memory_order_acquire))
        throw std::invalid_argument("rig::bnxt::Qp::create: the NIC is closed");
    const std::uint32_t most = n->limits.max_qp_wr;
    if (depths.send == 0 || depths.recv == 0 || depths.send > most || depths.recv > most)
        throw std::invalid_argument("rig::bnxt::Qp::create: depths " + std::to_string(depths.send) + " and " +
                                    std::to_string(depths.recv) + " are not in 1.." + std::to_string(most) +
                                    " (Limits::max_qp_wr: QUERY_FUNC max_qp_wr - 1, the ring holding one more)");
    const auto& scq = Handles::of(send_cq);
    const auto& rcq = Handles::of(recv_cq);
    for (const auto* cq : {&scq, &rcq})
        if (!*cq || !(*cq)->live.load(std::memory_order_acquire) || (*cq)->nic != n)
            throw std::invalid_argument("rig::bnxt::Qp::create: a completion queue is destroyed or of another NIC");

    auto qp = std::make_shared<State>();
    qp->nic = n;
    qp->send_cq = scq;
    qp->recv_cq = rcq;
    qp->depths = depths;
    qp->sq_size = depths.send + 1;
    qp->rq_size = depths.recv + 1;
    qp->initiator_depth = std::clamp<std::uint8_t>(n->limits.max_qp_init_rd_atom, 1, read_depth_most);
    qp->responder_depth = std::clamp<std::uint8_t>(n->limits.max_qp_rd_atom, 1, read_depth_most);
    qp->max_inline = n->limits.max_inline_data;
    qp->sq_shadow.resize(qp->sq_size);
    qp->rq_shadow.resize(qp->rq_size);
    qp->sq_prod = detail::RingPosition(qp->sq_size);
    qp->rq_prod = detail::RingPosition(qp->rq_size);

    // §5.4, §7.2 step 4: the SQ memory is the WQE ring, then one PSN entry per WQE.
    auto sq = allocate_queue(n->fn, hsi::psn_search_offset(qp->sq_size, qp->sq_size), poison_device_reads, "SQ");
    if (!sq) return std::unexpected(std::move(sq).error());
    qp->sq = std::move(*sq);
    auto rq = allocate_queue(n->fn, std::uint64_t{qp->rq_size} * hsi::wqe::bytes, poison_device_reads, "RQ");
    if (!rq) return std::unexpected(std::move(rq).error());
    qp->rq = std::move(*rq);
    const std::uint64_t orrq_bytes =
        round_page(std::uint64_t{hsi::orrq_slots(qp->initiator_depth)} * hsi::orrq_irrq_entry_bytes);
    const std::uint64_t irrq_bytes =
        round_page(std::uint64_t{hsi::irrq_slots(qp->responder_depth)} * hsi::orrq_irrq_entry_bytes);
    auto rrq = DmaBuffer::allocate(n->fn, orrq_bytes + irrq_bytes, pci::Contiguity::Contiguous, "ORRQ and IRRQ");
    if (!rrq) return std::unexpected(std::move(rrq).error());
    qp->orrq_irrq = std::move(*rrq);
    qp->sq_ring = qp->sq.memory.window();
    qp->rq_ring = qp->rq.memory.window();
    qp->doorbells = n->doorbells;

    std::lock_guard lock(n->mutex);
    if (n->closed.load(std::memory_order_acquire))
        throw std::invalid_argument("rig::bnxt::Qp::create: the NIC is closed");
    const std::uint32_t extra = scq == rcq ? depths.send + depths.recv : depths.send;
    if (scq->reserved + extra > scq->depth || (scq != rcq && rcq->reserved + depths.recv > rcq->depth))
        throw std::invalid_argument("rig::bnxt::Qp::create: the completion queues of " + std::to_string(scq->depth) +
                                    " and " + std::to_string(rcq->depth) + " cannot hold depths " +
                                    std::to_string(depths.send) + " and " + std::to_string(depths.recv) +
                                    " beside their queue pairs'");
    qp->handle = n->next_handle++;
    const std::uint8_t sges = static_cast<std::uint8_t>(std::max<std::uint32_t>(1, n->limits.max_sge));
    // §4.6.8.
    hsi::CreateQp command{};
    command.qp_handle = qp->handle;
    command.qp_flags = hsi::create_qp::linux_rc_flags;
    command.type = static_cast<std::uint8_t>(hsi::QpType::RC);
    command.sq_pg_size_sq_lvl = static_cast<std::uint8_t>(
        hsi::create_qp::sq_lvl(static_cast<std::uint8_t>(qp->sq.pages.level)) | hsi::create_qp::sq_pg_size(pg_code_4k));
    command.rq_pg_size_rq_lvl = static_cast<std::uint8_t>(
        hsi::create_qp::rq_lvl(static_cast<std::uint8_t>(qp->rq.pages.level)) | hsi::create_qp::rq_pg_size(pg_code_4k));
    command.dpi = 0;
    command.sq_size = qp->sq_size;
    command.rq_size = qp->rq_size;
    command.sq_fwo_sq_sge = static_cast<std::uint16_t>(hsi::create_qp::sq_sge(sges));
    command.rq_fwo_rq_sge = static_cast<std::uint16_t>(hsi::create_qp::rq_sge(sges));
    command.scq_cid = scq->id;
    command.rcq_cid = rcq->id;
    command.pd_id = n->pd_id;
    command.sq_pbl = qp->sq.pages.base;
    command.rq_pbl = qp->rq.pages.base;
    command.orrq_addr = qp->orrq_irrq.bus(0);
    command.irrq_addr = qp->orrq_irrq.bus(orrq_bytes);
    auto done = n->rcfw->call(hsi::Opcode::CREATE_QP, command);
    if (!done) return std::unexpected(std::move(done).error());
    qp->qpn = static_cast<std::uint32_t>(hsi::create_qp::qpn.of(done->xid));
    qp->live.store(true, std::memory_order_release);
    qp->local = Endpoint{qp->qpn, first_psn(qp->qpn), n->gid, n->mac, n->mtu};
    qp->next_psn = qp->local.psn;
    n->qps.push_back(qp.get());
    for (Cq::State* cq : {scq.get(), rcq.get()}) {
        std::vector<Qp::State*> list = cq->qps->qps;
        if (std::find(list.begin(), list.end(), qp.get()) == list.end()) list.push_back(qp.get());
        cq->set_qps(std::move(list));
    }
    scq->reserved += depths.send;
    rcq->reserved += depths.recv;
    return Qp(std::move(qp));
}

Result<void> Qp::connect(const Endpoint& peer, Retries retries, const Path& path) {
    State& qp = checked(state_, "connect");
    if (retries.retry_cnt > 7 || retries.rnr_retry > 7 || retries.timeout > 31)
        throw std::invalid_argument("rig::bnxt::Qp::connect: retry counts run 0..7 and the timeout 0..31");
    if (path.hop_limit == 0)
        throw std::invalid_argument("rig::bnxt::Qp::connect: a hop limit of 0 (its packets would leave no port)");
    const auto depth = [](std::optional<std::uint8_t> asked, std::uint8_t most, const char* what) {
        if (asked && (*asked == 0 || *asked > most))
            throw std::invalid_argument(std::string("rig::bnxt::Qp::connect: ") + what + " " + std::to_string(*asked) +
                                        " is not in 1.." + std::to_string(most));
        return asked.value_or(most);
    };
    const std::uint8_t initiator = depth(path.max_rd_atomic, qp.initiator_depth, "max_rd_atomic");
    const std::uint8_t responder = depth(path.max_dest_rd_atomic, qp.responder_depth, "max_dest_rd_atomic");
    Nic::State& n = *qp.nic;
    std::lock_guard lock(n.mutex);
    if (qp.state.load(std::memory_order_acquire) != QpState::Reset)
        throw std::invalid_argument("rig::bnxt::Qp::connect: queue pair " + std::to_string(qp.qpn) +
                                    " is not in RESET");
    const std::size_t gid_entry = path.gid_index.value_or(n.gid_chosen);
    if (gid_entry >= n.gids.size())
        throw std::invalid_argument("rig::bnxt::Qp::connect: GID index " + std::to_string(gid_entry) +
                                    " is not in the port's table of " + std::to_string(n.gids.size()));
    const GidEntry& source = n.gids[gid_entry];
    if (source.version != RoceVersion::V2)
        return fail(n.bus, ": queue pair ", std::to_string(qp.qpn), ": GID index ", std::to_string(gid_entry), " (",
                    to_string(source.gid), ") is RoCEv1; the driver speaks RoCEv2 only");
    const std::uint16_t sgid_index = n.gid_firmware[gid_entry];
    const bool ipv4 = is_ipv4_mapped(source.gid);
    if (ipv4 != is_ipv4_mapped(peer.gid))
        return fail(n.bus, ": queue pair ", std::to_string(qp.qpn), ": the source GID ", to_string(source.gid),
                    " (index ", std::to_string(gid_entry), ") is ", ipv4 ? "IPv4" : "IPv6", " and the peer's ",
                    to_string(peer.gid), " ", ipv4 ? "IPv6" : "IPv4");
    const Mtu mtu = std::min({qp.local.mtu, peer.mtu, path.mtu.value_or(qp.local.mtu)});

    // RESET -> INIT (mask 0x0000000D).
    hsi::ModifyQp init{};
    init.modify_mask = hsi::modify_mask::RESET_TO_INIT;
    init.qp_cid = qp.qpn;
    init.network_type_en_sqd_async_notify_new_state = with_state(hsi::QpState::INIT, ipv4);
    init.access = qp_access;
    init.pkey = pkey_default;
    if (auto done = n.rcfw->call(hsi::Opcode::MODIFY_QP, init); !done) return std::unexpected(std::move(done).error());
    qp.state.store(QpState::Init, std::memory_order_release);

    // INIT -> RTR (mask 0x141517E1 [CORRECTED]).
    hsi::ModifyQp rtr{};
    rtr.modify_mask = hsi::modify_mask::INIT_TO_RTR;
    rtr.qp_cid = qp.qpn;
    rtr.network_type_en_sqd_async_notify_new_state = with_state(hsi::QpState::RTR, ipv4);
    rtr.dgid = peer.gid;
    rtr.sgid_index = sgid_index;
    rtr.hop_limit = path.hop_limit;
    rtr.dest_mac = peer.mac;
    rtr.path_mtu_pingpong_push_enable =
        static_cast<std::uint8_t>(hsi::modify_qp::path_mtu(static_cast<std::uint8_t>(mtu_code(mtu))));
    rtr.rq_psn = static_cast<std::uint32_t>(hsi::modify_qp::psn(peer.psn));
    rtr.max_dest_rd_atomic = hsi::irrq_slots(responder);
    rtr.min_rnr_timer = min_rnr_timer;
    rtr.dest_qp_id = static_cast<std::uint32_t>(hsi::modify_qp::dest_qp_id(peer.qpn));
    rtr.vlan_pcp_vlan_dei_vlan_id = static_cast<std::uint16_t>(hsi::modify_qp::vlan_id(vlan_untagged));
    if (auto done = n.rcfw->call(hsi::Opcode::MODIFY_QP, rtr); !done) return std::unexpected(std::move(done).error());
    qp.state.store(QpState::Rtr, std::memory_order_release);
    qp.local.gid = source.gid;
    qp.mtu_bytes = bytes(mtu);
    qp.path_mtu = mtu;
    // §4.6.9: receives posted before RTR are announced now.
    if (qp.rq_doorbell_deferred && !qp.failed.load(std::memory_order_acquire)) {
        ring_doorbell(qp.doorbells, qp.rq_prod.doorbell(hsi::DbType::RQ, qp.qpn));
        qp.rq_doorbell_deferred = false;
    }

    // RTR -> RTS (mask 0x000AE001).
    hsi::ModifyQp rts{};
    rts.modify_mask = hsi::modify_mask::RTR_TO_RTS;
    rts.qp_cid = qp.qpn;
    rts.network_type_en_sqd_async_notify_new_state = with_state(hsi::QpState::RTS, ipv4);
    rts.timeout = retries.timeout;
    rts.retry_cnt = retries.retry_cnt;
    rts.rnr_retry = retries.rnr_retry;
    rts.sq_psn = static_cast<std::uint32_t>(hsi::modify_qp::psn(qp.local.psn));
    rts.max_rd_atomic = hsi::orrq_slots(initiator);
    if (auto done = n.rcfw->call(hsi::Opcode::MODIFY_QP, rts); !done) return std::unexpected(std::move(done).error());
    qp.state.store(QpState::Rts, std::memory_order_release);
    return {};
}

Result<void> Qp::State::destroy_locked() {
    if (!live.load(std::memory_order_acquire)) return {};
    if (nic->rcfw) {
        hsi::DestroyQp command{};
        command.qp_cid = qpn;
        if (auto done = nic->rcfw->call(hsi::Opcode::DESTROY_QP, command); !done)
            return std::unexpected(std::move(done).error());
    }
    retire(Memory::Free);  // the NIC reaches the queues no more
    return {};
}

void Qp::State::retire(Memory memory) {
    if (!live.exchange(false, std::memory_order_acq_rel)) return;
    std::erase(nic->qps, this);
    // Out of both Cqs' lists, and no poll holds it once set_qps returns: from here on no
    // completion of this Qp is reported (its CQEs still in a ring and its flushes are
    // dropped, cq.hpp). A poller's carry of it is dropped at its next poll.
    for (Cq::State* cq : {send_cq.get(), recv_cq.get()}) {
        std::vector<Qp::State*> list = cq->qps->qps;
        std::erase(list, this);
        cq->set_qps(std::move(list));
    }
    send_cq->reserved -= depths.send;
    recv_cq->reserved -= depths.recv;
    for (DmaBuffer* b : {&sq.memory, &sq.pages.table, &rq.memory, &rq.pages.table, &orrq_irrq}) {
        if (memory == Memory::KeepUntilClose) nic->kept.push_back(std::move(*b));
        b->reset();
    }
}

Qp::State::~State() {
    if (!nic || !live.load(std::memory_order_acquire)) return;
    std::lock_guard lock(nic->mutex);
    if (!nic->closed.load(std::memory_order_acquire) && !destroy_locked()) retire(Memory::KeepUntilClose);
}

Qp::Qp(std::shared_ptr<State> state) : state_(std::move(state)) {}
Qp::Qp(Qp&&) noexcept = default;
Qp& Qp::operator=(Qp&& other) noexcept {
    if (this != &other) {
        if (state_) (void)destroy();
        state_ = std::move(other.state_);
    }
    return *this;
}
Qp::~Qp() {
    if (state_) (void)destroy();
}

Result<void> Qp::destroy() {
    if (!state_) return {};
    State& qp = *state_;
    std::lock_guard lock(qp.nic->mutex);
    if (qp.nic->closed.load(std::memory_order_acquire) || !qp.live.load(std::memory_order_acquire)) return {};
    return qp.destroy_locked();
}

Endpoint Qp::endpoint() const { return checked(state_, "endpoint").local; }
ReadDepths Qp::read_depths() const {
    const State& qp = checked(state_, "read_depths");
    return {qp.initiator_depth, qp.responder_depth};
}
std::optional<Mtu> Qp::path_mtu() const { return state_ && state_->live ? state_->path_mtu : std::nullopt; }
QpState Qp::state() const { return state_ ? state_->state.load(std::memory_order_acquire) : QpState::Error; }
std::uint32_t Qp::qpn() const { return state_ ? state_->qpn : 0; }
Depths Qp::depths() const { return state_ ? state_->depths : Depths{}; }

}  // namespace rig::bnxt

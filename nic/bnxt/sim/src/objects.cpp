// RCFW commands on the objects of the RoCE function (docs/hsi.md §4.6.5-§4.6.12):
// GIDs, CQs, QP creation, destruction and query, and the memory-region table. Each
// command checks what the firmware checks and refuses with its status; MODIFY_QP and the
// error state live in qp.cpp. Among the checks:
//   - CREATE_CQ and CREATE_QP name a DPI the function has (below QUERY_FUNC max_dpi), and
//     CREATE_QP a PD below max_pd; an RC QP's ORRQ and IRRQ (the RDMA READ and atomic
//     state the chip keeps, §4.6.8) are non-zero and 4 KiB aligned, as Linux allocates
//     them page by page (bnxt_qplib_create_qp): INVALID_PARAMETER.
//   - ADD_GID of a GID and VLAN the table already holds is INVALID_PARAMETER [UNCERTAIN:
//     the firmware's status; Linux's bnxt_qplib_add_sgid finds the duplicate itself and
//     never sends it].
#include <algorithm>

#include "firmware.hpp"
#include "rig/bnxt/hsi/pbl.hpp"

namespace rig::bnxt::sim::detail {

using hsi::RcfwStatus;

namespace {

constexpr std::uint32_t qpn_limit = 1u << 20;  // a QPN is a doorbell xid: 20 bits (§5.8.1)

bool page_aligned(std::uint64_t address) { return address % hsi::pte::table_page_bytes == 0; }

}  // namespace

Firmware::Firmware(const ModelOptions& options, const ModelClock& clock, testing::Counters& counters, RxCounters& rx,
                   FaultPlan& faults, Transmitter& transmitter, Neighbours& neighbours)
    : options_(options),
      clock_(clock),
      counters_(counters),
      rx_(rx),
      faults_(faults),
      transmitter_(transmitter),
      neighbours_(neighbours),
      bus_(counters),
      address_(parse_address(options.address)),
      gids_(options.limits.max_gid) {}

Firmware::Answer Firmware::add_gid(std::span<const std::byte> c) {
    const auto cmd = load<hsi::AddGid>(c);
    if (gids_.size() != options_.limits.max_gid) gids_.resize(options_.limits.max_gid);
    // §4.6.5: the GID arrives reversed and the MAC pair-swapped; both swaps are their own inverse.
    const GidEntry entry{hsi::add_gid_bytes(cmd.gid), hsi::add_gid_mac(cmd.src_mac), cmd.vlan};
    if (std::any_of(gids_.begin(), gids_.end(),
                    [&](const auto& g) { return g && g->gid == entry.gid && g->vlan == entry.vlan; }))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    auto free = std::find_if(gids_.begin(), gids_.end(), [](const auto& g) { return !g.has_value(); });
    if (free == gids_.end()) return Answer::fail(RcfwStatus::RESOURCES);
    *free = entry;
    Answer a;
    a.xid = static_cast<std::uint32_t>(free - gids_.begin());
    return a;
}

Firmware::Answer Firmware::delete_gid(std::span<const std::byte> c) {
    const auto cmd = load<hsi::DeleteGid>(c);
    if (cmd.gid_index >= gids_.size() || !gids_[cmd.gid_index]) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    gids_[cmd.gid_index].reset();
    return {};
}

Firmware::Answer Firmware::create_cq(std::span<const std::byte> c) {
    const auto cmd = load<hsi::CreateCq>(c);
    const auto level = static_cast<unsigned>(hsi::create_cq::lvl.of(cmd.pg_size_lvl));
    const unsigned page_log2 =
        hsi::pg_size_log2(static_cast<std::uint8_t>(hsi::create_cq::pg_size.of(cmd.pg_size_lvl)));
    const auto nq_id = static_cast<std::uint16_t>(hsi::create_cq::cnq_id.of(cmd.cq_fco_cnq_id));
    NqRing* nq = find_ring(nq_id);
    if (cmd.cq_size == 0 || cmd.cq_size > options_.limits.max_cqe || level > 2 || page_log2 == 0 || !nq ||
        cmd.dpi >= dpi_pages || hsi::create_cq::cq_fco.of(cmd.cq_fco_cnq_id) != 0 ||
        (level > 0 && !page_aligned(cmd.pbl)))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    // §3.11: beside QUERY_FUNC's limit, the contexts BACKING_STORE_CFG gave the RoCE CQs.
    if (cqs_.size() >= options_.limits.max_cq || cqs_.size() >= context_.cqs)
        return Answer::fail(RcfwStatus::RESOURCES);
    std::uint32_t id = 0;
    do {
        id = 1 + next_cq_++ % (qpn_limit - 1);
    } while (cqs_.contains(id));
    Cq cq;
    cq.id = id;
    cq.handle = cmd.cq_handle;
    cq.dpi = cmd.dpi;
    cq.memory = PageList(level, page_log2, cmd.pbl);
    cq.size = cmd.cq_size;
    cq.nq = nq_id;
    ++nq->cq_users;
    cqs_.emplace(id, std::move(cq));
    Answer a;
    a.xid = id;
    return a;
}

Firmware::Answer Firmware::destroy_cq(std::span<const std::byte> c) {
    const auto cmd = load<hsi::DestroyCq>(c);
    auto it = cqs_.find(cmd.cq_cid);
    // §4.6.7 model rule: status 5 while a QP still references the CQ.
    if (it == cqs_.end() || it->second.qp_users > 0) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    const Cq& cq = it->second;
    hsi::CreqDestroyCqCompletion done{};
    done.cq_arm_lvl = static_cast<std::uint16_t>(cq.arm == CqArm::none ? 0 : cq.arm == CqArm::solicited ? 1 : 2);
    done.total_cnq_events = static_cast<std::uint16_t>(cq.notifications);
    const auto b = bytes_of(done);
    Answer a;
    a.xid = cq.id;
    std::copy(b.begin() + 10, b.end(), a.extra.begin());
    if (NqRing* nq = find_ring(cq.nq)) --nq->cq_users;
    cqs_.erase(it);
    return a;
}

Firmware::Answer Firmware::create_qp(std::span<const std::byte> c) {
    const auto cmd = load<hsi::CreateQp>(c);
    const auto& limits = options_.limits;
    namespace cq = hsi::create_qp;
    const std::uint32_t flags = cmd.qp_flags;
    if (cmd.type != static_cast<std::uint8_t>(hsi::QpType::RC))
        return Answer::fail(RcfwStatus::NOT_IMPLEMENTED);  // the model runs RC only (a gap, stated)
    if (cq::VARIABLE_SIZED_WQE_ENABLED.of(flags)) return Answer::fail(RcfwStatus::NOT_IMPLEMENTED);  // [P7] mode
    if (cq::SRQ_USED.of(flags)) return Answer::fail(RcfwStatus::INVALID_PARAMETER);                  // no SRQ can exist
    const auto sq_level = static_cast<unsigned>(cq::sq_lvl.of(cmd.sq_pg_size_sq_lvl));
    const auto rq_level = static_cast<unsigned>(cq::rq_lvl.of(cmd.rq_pg_size_rq_lvl));
    const unsigned sq_page = hsi::pg_size_log2(static_cast<std::uint8_t>(cq::sq_pg_size.of(cmd.sq_pg_size_sq_lvl)));
    const unsigned rq_page = hsi::pg_size_log2(static_cast<std::uint8_t>(cq::rq_pg_size.of(cmd.rq_pg_size_rq_lvl)));
    const auto sq_sge = static_cast<std::uint8_t>(cq::sq_sge.of(cmd.sq_fwo_sq_sge));
    const auto rq_sge = static_cast<std::uint8_t>(cq::rq_sge.of(cmd.rq_fwo_rq_sge));
    Cq* scq = find_cq(cmd.scq_cid);
    Cq* rcq = find_cq(cmd.rcq_cid);
    if (cmd.sq_size == 0 || cmd.sq_size > limits.max_qp_wr || cmd.rq_size > limits.max_qp_wr || sq_level > 2 ||
        rq_level > 2 || sq_page == 0 || rq_page == 0 || sq_sge > limits.max_sge || rq_sge > limits.max_sge ||
        sq_sge > hsi::wqe::max_sges || rq_sge > hsi::wqe::max_sges || cq::sq_fwo.of(cmd.sq_fwo_sq_sge) != 0 ||
        cq::rq_fwo.of(cmd.rq_fwo_rq_sge) != 0 || !scq || !rcq || (sq_level > 0 && !page_aligned(cmd.sq_pbl)) ||
        (rq_level > 0 && !page_aligned(cmd.rq_pbl)) || cmd.dpi >= dpi_pages || cmd.pd_id >= max_pd ||
        cmd.orrq_addr == 0 || cmd.irrq_addr == 0 || !page_aligned(cmd.orrq_addr) || !page_aligned(cmd.irrq_addr))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    if (qps_.size() >= limits.max_qp || qps_.size() >= context_.qps) return Answer::fail(RcfwStatus::RESOURCES);
    std::uint32_t qpn = 0;
    do {
        qpn = next_qpn_++;
        if (next_qpn_ >= qpn_limit) next_qpn_ = 2;  // §4.6.8: 0 and 1 are special
    } while (qps_.contains(qpn));
    Qp qp;
    qp.qpn = qpn;
    qp.handle = cmd.qp_handle;
    qp.pd = cmd.pd_id;
    qp.dpi = cmd.dpi;
    qp.flags = flags;
    qp.scq = scq->id;
    qp.rcq = rcq->id;
    qp.sq_memory = PageList(sq_level, sq_page, cmd.sq_pbl);
    qp.rq_memory = PageList(rq_level, rq_page, cmd.rq_pbl);
    qp.sq_size = cmd.sq_size;
    qp.rq_size = cmd.rq_size;
    qp.sq_sge = sq_sge;
    qp.rq_sge = rq_sge;
    qp.max_inline_data = limits.max_inline_data;
    ++scq->qp_users;
    ++rcq->qp_users;
    qps_.emplace(qpn, std::move(qp));
    Answer a;
    a.xid = qpn;
    return a;
}

Firmware::Answer Firmware::destroy_qp(std::span<const std::byte> c) {
    const auto cmd = load<hsi::DestroyQp>(c);
    auto it = qps_.find(cmd.qp_cid);
    if (it == qps_.end()) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    // §4.6.11: any state; no further CQEs for it.
    if (Cq* s = find_cq(it->second.scq)) --s->qp_users;
    if (Cq* r = find_cq(it->second.rcq)) --r->qp_users;
    Answer a;
    a.xid = it->first;
    qps_.erase(it);
    return a;
}

Firmware::Answer Firmware::query_qp(std::span<const std::byte> c) {
    const auto cmd = load<hsi::QueryQp>(c);
    const auto head = load<hsi::CmdqBase>(c);
    const auto sb = describe_qp(cmd.qp_cid);
    if (!sb || head.resp_addr == 0 || head.resp_size == 0) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    Answer a;
    a.side_buffer = bytes_of(*sb);
    return a;
}

std::optional<hsi::QueryQpSb> Firmware::describe_qp(std::uint32_t qpn) {
    const Qp* qp = find_qp(qpn);
    if (!qp) return std::nullopt;
    hsi::QueryQpSb sb{};
    sb.xid = qp->qpn;
    sb.en_sqd_async_notify_state =
        static_cast<std::uint8_t>(hsi::query_qp::state(static_cast<std::uint8_t>(qp->state)) |
                                  hsi::query_qp::EN_SQD_ASYNC_NOTIFY(qp->en_sqd_async_notify ? 1 : 0));
    sb.access = qp->access;
    sb.pkey = qp->pkey;
    sb.qkey = qp->qkey;
    sb.dgid = qp->dgid;
    sb.flow_label = qp->flow_label;
    sb.sgid_index = qp->sgid_index;
    sb.hop_limit = qp->hop_limit;
    sb.traffic_class = qp->traffic_class;
    sb.dest_mac = qp->dest_mac;
    sb.path_mtu_dest_vlan_id = static_cast<std::uint16_t>(
        hsi::query_qp::path_mtu(qp->path_mtu) | hsi::query_qp::dest_vlan_id(hsi::modify_qp::vlan_id.of(qp->vlan)));
    sb.timeout = qp->timeout;
    sb.retry_cnt = qp->retry_cnt;
    sb.rnr_retry = qp->rnr_retry;
    sb.min_rnr_timer = qp->min_rnr_timer;
    sb.rq_psn = qp->rq_psn;
    sb.sq_psn = qp->sq_psn;
    sb.max_rd_atomic = qp->max_rd_atomic;
    sb.max_dest_rd_atomic = qp->max_dest_rd_atomic;
    sb.tos_dscp_tos_ecn = qp->tos_dscp_tos_ecn;
    sb.enable_cc = static_cast<std::uint8_t>(qp->enable_cc);
    sb.sq_size = qp->sq_size;
    sb.rq_size = qp->rq_size;
    sb.sq_sge = qp->sq_sge;
    sb.rq_sge = qp->rq_sge;
    sb.max_inline_data = qp->max_inline_data;
    sb.dest_qp_id = qp->dest_qp;
    sb.src_mac = qp->src_mac;
    sb.vlan_pcp_vlan_dei_vlan_id = qp->vlan;
    return sb;
}

std::optional<std::array<std::uint8_t, 16>> Firmware::gid(std::uint16_t index) const {
    if (index >= gids_.size() || !gids_[index]) return std::nullopt;
    return gids_[index]->gid;
}

Firmware::Answer Firmware::allocate_mrw(std::span<const std::byte> c) {
    const auto cmd = load<hsi::AllocateMrw>(c);
    const auto type = static_cast<hsi::MrwType>(hsi::allocate_mrw::mrw_type.of(cmd.mrw_flags));
    if (type != hsi::MrwType::MR && type != hsi::MrwType::PMR) {
        // Memory windows: the model has none (a gap, stated).
        return Answer::fail(type <= hsi::MrwType::MW_TYPE2B ? RcfwStatus::NOT_IMPLEMENTED
                                                            : RcfwStatus::INVALID_PARAMETER);
    }
    if (mrs_.size() >= options_.limits.max_mr || mrs_.size() >= context_.mrs)
        return Answer::fail(RcfwStatus::RESOURCES);
    // §6.1 model recommendation: key = entry_index << 8 | variant, entry_index >= 1.
    std::uint32_t key = 0;
    do {
        key = (1 + next_mr_index_++ % 0xFFFFFE) << 8;
    } while (mrs_.contains(key));
    Mr mr;
    mr.key = key;
    mr.pd = cmd.pd_id;
    mr.type = type;
    mr.handle = cmd.mrw_handle;
    mrs_.emplace(key, std::move(mr));
    Answer a;
    a.xid = key;
    return a;
}

Firmware::Answer Firmware::register_mr(std::span<const std::byte> c) {
    const auto cmd = load<hsi::RegisterMr>(c);
    const auto head = load<hsi::CmdqBase>(c);
    namespace rm = hsi::register_mr;
    // Unified allocation needs QUERY_FUNC MR_REGISTER_ALLOC, which the model does not report.
    if (rm::ALLOC_MR.of(head.flags)) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    Mr* mr = find_mr(cmd.key);
    const auto level = static_cast<unsigned>(rm::lvl.of(cmd.log2_pg_size_lvl));
    const auto log2_page = static_cast<unsigned>(rm::log2_pg_size.of(cmd.log2_pg_size_lvl));
    const std::uint64_t size = cmd.mr_size;
    const std::uint64_t va = cmd.va;
    const std::uint8_t access = cmd.access;
    // §4.6.12: REGISTER on an unallocated (or bound) key -> 5; §6.3: 12 <= log2 <= 30.
    if (!mr || mr->registered || level > 2 || log2_page < rm::log2_pg_size_min || log2_page > rm::log2_pg_size_max ||
        size == 0)
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    // IB: remote write or atomic rights need local write.
    if ((access & (hsi::mr_access::REMOTE_WRITE | hsi::mr_access::REMOTE_ATOMIC)) &&
        !(access & hsi::mr_access::LOCAL_WRITE))
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    const std::uint64_t page = std::uint64_t{1} << log2_page;
    const bool dma_mr = level == 0 && cmd.pbl == 0 && va == 0 && size == rm::mr_size_unlimited;
    const bool zero_based = access & hsi::mr_access::ZERO_BASED;
    if (!dma_mr) {
        if (size > options_.limits.max_mr_size) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
        const std::uint64_t first = zero_based ? 0 : va;
        if (first + size < first) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
        const std::uint64_t pages = ((first + size - 1) >> log2_page) - (first >> log2_page) + 1;
        // §2.2: level 0 is exactly one data page, at its page alignment; level 1 names at
        // most 512 pages; PTE/PDE pages are 4 KiB (log2_pbl_pg_size 12).
        if (level == 0 && (pages != 1 || (cmd.pbl & (page - 1)) != 0))
            return Answer::fail(RcfwStatus::INVALID_PARAMETER);
        if (level == 1 && pages > hsi::pte::entries_per_page) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
        if (level == 2 && pages > hsi::pte::entries_per_page * hsi::pte::entries_per_page)
            return Answer::fail(RcfwStatus::INVALID_PARAMETER);
        if (level > 0 && (rm::log2_pbl_pg_size.of(cmd.log2_pbl_pg_size) != 12 || !page_aligned(cmd.pbl)))
            return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    }
    mr->registered = true;
    mr->va = va;
    mr->size = size;
    mr->access = access;
    mr->relaxed = rm::ENABLE_RO.of(head.flags) != 0;
    mr->log2_page = log2_page;
    mr->pages = PageList(level, log2_page, cmd.pbl);
    Answer a;
    a.xid = mr->key;
    return a;
}

Firmware::Answer Firmware::deregister_mr(std::span<const std::byte> c) {
    const auto cmd = load<hsi::DeregisterMr>(c);
    Mr* mr = find_mr(cmd.lkey);
    if (!mr || !mr->registered) return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    // §4.6.12: unusable for data transfer, still allocated.
    mr->registered = false;
    mr->pages = PageList();
    Answer a;
    a.xid = mr->key;
    return a;
}

Firmware::Answer Firmware::deallocate_key(std::span<const std::byte> c) {
    const auto cmd = load<hsi::DeallocateKey>(c);
    auto it = mrs_.find(cmd.key);
    const auto type = static_cast<hsi::MrwType>(hsi::allocate_mrw::mrw_type.of(cmd.mrw_flags));
    // Model rule: the key must be deregistered first, and named with its type.
    if (it == mrs_.end() || it->second.registered || it->second.type != type)
        return Answer::fail(RcfwStatus::INVALID_PARAMETER);
    Answer a;
    a.xid = it->first;
    mrs_.erase(it);
    return a;
}

void Firmware::destroy_roce_objects() {
    qps_.clear();
    cqs_.clear();
    mrs_.clear();
    for (auto& [id, ring] : rings_) ring.cq_users = 0;
}

Qp* Firmware::find_qp(std::uint32_t qpn) {
    auto it = qps_.find(qpn);
    return it == qps_.end() ? nullptr : &it->second;
}
Cq* Firmware::find_cq(std::uint32_t id) {
    auto it = cqs_.find(id);
    return it == cqs_.end() ? nullptr : &it->second;
}
NqRing* Firmware::find_ring(std::uint16_t id) {
    auto it = rings_.find(id);
    return it == rings_.end() ? nullptr : &it->second;
}
Mr* Firmware::find_mr(std::uint32_t key) {
    auto it = mrs_.find(key);
    return it == mrs_.end() ? nullptr : &it->second;
}

}  // namespace rig::bnxt::sim::detail

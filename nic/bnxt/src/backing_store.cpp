// §7.1 step 8, spec/bnxt-hsi.md §3.11: on P5 the host gives the chip its context memory
// (QP, SRQ, CQ, VNIC, statistics, TQM, MR/AH, timer tables) before any ring exists.
//
// The rule: HWRM_FUNC_BACKING_STORE_QCAPS says what each kind needs. A firmware that does
// not know the command (CMD_NOT_SUPPORTED) keeps its own context memory, as a model may
// (§3.11, §8.3): nothing is configured. Otherwise each kind gets entries × entry_size
// bytes of 4 KiB pages behind a page list of the level they need (PTEs with VALID only),
// pre-filled with ctx_kind_initializer at every entry's init offset where ctx_init_mask
// asks (the offsets count 4-byte words, as Linux reads them [UNCERTAIN: §3.11 gives no
// unit]), and HWRM_FUNC_BACKING_STORE_CFG names them. Sizes follow Linux's rules (§3.11)
// but for the RoCE share, which is the driver's own maxima (Options::max_qps, max_cqs,
// max_mrs), not Linux's 64 Ki queue pairs. SRQs are not used: only the L2 share.
#include <algorithm>
#include <array>

#include "bringup.hpp"
#include "rig/bnxt/hsi/hwrm.hpp"

namespace rig::bnxt {
namespace {

using Kind = hsi::BackingStoreKind;

struct Table {
    Kind kind;
    std::uint32_t entries;
    std::uint16_t entry_size;
    std::uint8_t init_offset;  // in 4-byte words; 0xFF: the whole page
    bool init;                 // ctx_init_mask asks for it
};

constexpr std::uint8_t init_offset_whole = 0xFF;

std::uint32_t clamp_multiple(std::uint32_t n, std::uint32_t low, std::uint32_t high, std::uint32_t multiple) {
    n = std::clamp(n, low, std::max(low, high));
    if (multiple > 1) n = (n + multiple - 1) / multiple * multiple;
    return n;
}

// Allocates, fills and describes one table; records its page list in the request.
Result<void> give(Nic::State& nic, const Table& t, std::uint8_t initializer, hsi::BackingStoreCfgRequest& request) {
    const std::uint64_t bytes = std::uint64_t{t.entries} * t.entry_size;
    if (bytes == 0) return {};
    const std::uint64_t page = hsi::pte::table_page_bytes;
    auto memory = DmaBuffer::allocate(nic.fn, (bytes + page - 1) / page * page, pci::Contiguity::Any, "context memory");
    if (!memory) return std::unexpected(std::move(memory).error());
    if (t.init) {
        if (t.init_offset == init_offset_whole) {
            memory->fill(std::byte{initializer});
        } else {
            const std::uint64_t offset = std::uint64_t{t.init_offset} * 4;
            for (std::uint64_t e = 0; e < t.entries && offset < t.entry_size; ++e)
                memory->window().write8(e * t.entry_size + offset, initializer);
        }
    }
    auto pages = detail::page_addresses(memory->runs(), 12);
    pages.resize((bytes + page - 1) / page);
    auto list = make_page_list(nic.fn, pages, detail::PageListKind::Region, "context memory");
    if (!list) return std::unexpected(std::move(list).error());
    const auto k = static_cast<std::size_t>(t.kind);
    request.pg_size_lvl[k] = static_cast<std::uint8_t>(hsi::backing_store::lvl(static_cast<std::uint8_t>(list->level)) |
                                                       hsi::backing_store::pg_size(pg_code_4k));
    request.page_dir[k] = list->base;
    nic.backing_store.push_back(std::move(*memory));
    if (list->table) nic.backing_store.push_back(std::move(list->table));
    return {};
}

// The enables bit of a kind (§3.11): QP 0 … TQM_RING7 13, MRAV 14, TIM 15: the kind's order.
std::uint32_t enable_bit(Kind kind) { return std::uint32_t{1} << static_cast<unsigned>(kind); }

}  // namespace

Result<void> backing_store(Nic::State& nic) {
    hsi::HwrmRequestHeader qcaps{};
    auto answer = nic.hwrm->ask<hsi::BackingStoreQcapsResponse>(hsi::ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, qcaps);
    if (!answer) return std::unexpected(std::move(answer).error());
    if (answer->error_code == static_cast<std::uint16_t>(hsi::HwrmError::CMD_NOT_SUPPORTED)) return {};
    if (answer->error_code != 0) return nic.hwrm->refused(hsi::ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, answer->error_code);
    if (auto r = nic.hwrm->too_short(hsi::ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, answer->resp_len,
                                     offsetof(hsi::BackingStoreQcapsResponse, reserved_82));
        !r)
        return r;
    const hsi::BackingStoreQcapsResponse& q = answer->response;
    const auto mask = q.ctx_init_mask.get();

    const std::uint32_t qp_l2 = q.qp_max_l2_entries, qp1 = q.qp_min_qp1_entries;
    const std::uint32_t qps = std::min<std::uint32_t>(q.qp_max_entries, qp_l2 + qp1 + nic.options.max_qps);
    const std::uint32_t cqs = std::min<std::uint32_t>(q.cq_max_entries, q.cq_max_l2_entries + nic.options.max_cqs);
    const std::uint32_t srqs = q.srq_max_l2_entries;
    const std::uint32_t mrs = std::min<std::uint32_t>(q.mrav_max_entries, nic.options.max_mrs);
    const std::uint32_t stats = std::min<std::uint32_t>(q.stat_max_entries, 16);
    const std::uint32_t vnics = std::uint32_t{q.vnic_max_vnic_entries} + q.vnic_max_ring_table_entries;
    const std::uint32_t tqm = clamp_multiple(qps + srqs, q.tqm_min_entries_per_ring, q.tqm_max_entries_per_ring,
                                             q.tqm_entries_multiple);
    const unsigned tqm_rings = std::min<unsigned>(q.tqm_fp_rings_count != 0 ? q.tqm_fp_rings_count : 8u, 8u);

    std::vector<Table> tables = {
        {Kind::QPC, qps, q.qp_entry_size, q.qp_init_offset, (mask & 0x01) != 0},
        {Kind::SRQ, srqs, q.srq_entry_size, q.srq_init_offset, (mask & 0x02) != 0},
        {Kind::CQ, cqs, q.cq_entry_size, q.cq_init_offset, (mask & 0x04) != 0},
        {Kind::VNIC, vnics, q.vnic_entry_size, q.vnic_init_offset, (mask & 0x08) != 0},
        {Kind::STAT, stats, q.stat_entry_size, q.stat_init_offset, (mask & 0x10) != 0},
        {Kind::TQM_SP, tqm, q.tqm_entry_size, 0, false},
        {Kind::MRAV, mrs, q.mrav_entry_size, q.mrav_init_offset, (mask & 0x20) != 0},
        {Kind::TIM, qps, q.tim_entry_size, 0, false},
    };
    for (unsigned r = 0; r < tqm_rings; ++r)
        tables.push_back({static_cast<Kind>(static_cast<unsigned>(Kind::TQM_RING0) + r), tqm, q.tqm_entry_size, 0, false});

    hsi::BackingStoreCfgRequest request{};
    for (const Table& t : tables) {
        if (auto r = give(nic, t, q.ctx_kind_initializer, request); !r) return r;
        if (std::uint64_t{t.entries} * t.entry_size != 0) request.enables = request.enables.get() | enable_bit(t.kind);
    }
    request.qp_num_entries = qps;
    request.qp_num_qp1_entries = static_cast<std::uint16_t>(qp1);
    request.qp_num_l2_entries = static_cast<std::uint16_t>(qp_l2);
    request.qp_entry_size = q.qp_entry_size;
    request.srq_num_entries = srqs;
    request.srq_num_l2_entries = static_cast<std::uint16_t>(srqs);
    request.srq_entry_size = q.srq_entry_size;
    request.cq_num_entries = cqs;
    request.cq_num_l2_entries = q.cq_max_l2_entries;
    request.cq_entry_size = q.cq_entry_size;
    request.vnic_num_vnic_entries = q.vnic_max_vnic_entries;
    request.vnic_num_ring_table_entries = q.vnic_max_ring_table_entries;
    request.vnic_entry_size = q.vnic_entry_size;
    request.stat_num_entries = stats;
    request.stat_entry_size = q.stat_entry_size;
    request.tqm_sp_num_entries = tqm;
    for (unsigned r = 0; r < tqm_rings; ++r) request.tqm_ring_num_entries[r] = tqm;
    request.tqm_entry_size = q.tqm_entry_size;
    request.mrav_num_entries = mrs;  // the total count: MRAV_RESERVATION_SPLIT is not set
    request.mrav_entry_size = q.mrav_entry_size;
    request.tim_num_entries = qps;
    request.tim_entry_size = q.tim_entry_size;
    auto cfg = nic.hwrm->call<hsi::HwrmErrorResponse>(hsi::ReqType::HWRM_FUNC_BACKING_STORE_CFG, request);
    if (!cfg) return std::unexpected(std::move(cfg).error());
    return {};
}

}  // namespace rig::bnxt

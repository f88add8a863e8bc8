// §7.1 step 8, docs/hsi.md §3.11: on P5 the host gives the chip its context memory
// (QP, SRQ, CQ, VNIC, statistics, TQM, MR/AH, timer tables) before any ring exists.
//
// The rule, after Linux's bnxt_alloc_ctx_mem and bnxt_hwrm_func_backing_store_cfg (bnxt.c):
//   - HWRM_FUNC_BACKING_STORE_QCAPS says what each kind needs. A firmware that does not
//     know the command (CMD_NOT_SUPPORTED) keeps its own context memory, as a model may
//     (§3.11, §8.3): nothing is configured.
//   - Entries: QP = the L2 and QP1 shares + the driver's queue pairs (Options::max_qps,
//     within qp_max_entries); SRQ = the L2 share (the driver has no SRQs); CQ = the L2 share
//     + Options::max_cqs; VNIC = QCAPS's; STAT = 16 (at most stat_max_entries); MRAV =
//     Options::max_mrs regions and no address handles (RC only), as num_mr and num_ah in
//     units of mrav_num_entries_units with MRAV_RESERVATION_SPLIT where QCAPS gives the
//     units, else the total; TIM = the QP entries. TQM: the slow-path ring holds VNIC + L2
//     + 2 x (queue pairs + QP1) + tqm_min_entries_per_ring, each fast-path ring L2 + 2 x
//     (queue pairs + QP1), rounded up to tqm_entries_multiple and clamped to the per-ring
//     minimum and maximum; the fast-path rings are tqm_fp_rings_count of them, or, where
//     QCAPS gives 0, as many as HWRM_QUEUE_QPORTCFG's max_configurable_queues (Linux's
//     bp->max_q), at most 8. A kind whose entry size or entries are 0 is not enabled.
//   - Pages: 4 KiB, behind a page list whose level is the one Linux forces (2 for QP, SRQ,
//     CQ, MRAV and the slow-path TQM ring; 1 for the rest), PTEs with VALID only,
//     pre-filled with ctx_kind_initializer at every entry's init offset where
//     ctx_init_mask asks (the offsets count 4-byte words, as Linux reads them [UNCERTAIN:
//     §3.11 gives no unit]).
//   - Bound: before anything is allocated, every table must fit a level-2 page list
//     (512 x 512 pages) and all of them Options::max_context_bytes: a firmware asking for
//     more (a tqm_min_entries_per_ring of 262,144 asked 9.2 GiB) is refused with the
//     figures.
//   - The request is the full 336 bytes where the firmware's max_ext_req_len takes them,
//     else its first 256 (BNXT_BACKING_STORE_CFG_LEGACY_LEN), as Linux sends it.
#include <algorithm>
#include <array>

#include "bringup.hpp"
#include "rig/bnxt/hsi/hwrm.hpp"
#include "rig/text.hpp"

namespace rig::bnxt {
namespace {

using Kind = hsi::BackingStoreKind;

struct Table {
    Kind kind;
    std::uint32_t entries;
    std::uint16_t entry_size;
    std::uint8_t init_offset;  // in 4-byte words; 0xFF: the whole page
    bool init;                 // ctx_init_mask asks for it
    hsi::PblLevel level;       // at least this level (Linux's depth)
    std::uint64_t bytes() const { return std::uint64_t{entries} * entry_size; }
};

constexpr std::uint8_t init_offset_whole = 0xFF;
constexpr std::uint64_t page_bytes = hsi::pte::table_page_bytes;
constexpr std::uint64_t most_pages = hsi::pte::entries_per_page * hsi::pte::entries_per_page;

const char* name(Kind kind) {
    switch (kind) {
    case Kind::QPC: return "QP";
    case Kind::SRQ: return "SRQ";
    case Kind::CQ: return "CQ";
    case Kind::VNIC: return "VNIC";
    case Kind::STAT: return "STAT";
    case Kind::TQM_SP: return "TQM slow-path";
    case Kind::MRAV: return "MRAV";
    case Kind::TIM: return "TIM";
    default: return "TQM fast-path";
    }
}

std::uint32_t clamp_multiple(std::uint64_t n, std::uint32_t low, std::uint32_t high, std::uint32_t multiple) {
    if (multiple > 1) n = (n + multiple - 1) / multiple * multiple;
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(n, low, std::max(low, high)));
}

// Allocates, fills and describes one table; records its page list in the request.
Result<void> give(Nic::State& nic, const Table& t, std::uint8_t initializer, hsi::BackingStoreCfgRequest& request) {
    const std::uint64_t bytes = t.bytes();
    auto memory = DmaBuffer::allocate(nic.fn, (bytes + page_bytes - 1) / page_bytes * page_bytes, pci::Contiguity::Any,
                                      "context memory");
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
    pages.resize((bytes + page_bytes - 1) / page_bytes);
    auto list = make_page_list(nic.fn, pages, detail::PageListKind::Region, "context memory", t.level);
    if (!list) return std::unexpected(std::move(list).error());
    const auto k = static_cast<std::size_t>(t.kind);
    request.pg_size_lvl[k] = static_cast<std::uint8_t>(hsi::backing_store::lvl(static_cast<std::uint8_t>(list->level)) |
                                                       hsi::backing_store::pg_size(pg_code_4k));
    request.page_dir[k] = list->base;
    request.enables = request.enables.get() | (std::uint32_t{1} << k);
    nic.backing_store.push_back(std::move(*memory));
    if (list->table) nic.backing_store.push_back(std::move(list->table));
    return {};
}

// HWRM_QUEUE_QPORTCFG's max_configurable_queues (TX path), at most 8.
Result<unsigned> cos_queues(Nic::State& nic) {
    hsi::QueueQportcfgRequest request{};
    auto r = nic.hwrm->call<hsi::QueueQportcfgResponse>(
        hsi::ReqType::HWRM_QUEUE_QPORTCFG, request,
        offsetof(hsi::QueueQportcfgResponse, max_configurable_lossless_queues));
    if (!r) return std::unexpected(std::move(r).error());
    return std::min<unsigned>(r->max_configurable_queues, hsi::queue_qportcfg::max_queues);
}

}  // namespace

Result<void> backing_store(Nic::State& nic) {
    hsi::HwrmRequestHeader qcaps{};
    auto answer = nic.hwrm->ask<hsi::BackingStoreQcapsResponse>(hsi::ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, qcaps);
    if (!answer) return std::unexpected(std::move(answer).error());
    if (answer->error_code == static_cast<std::uint16_t>(hsi::HwrmError::CMD_NOT_SUPPORTED)) return {};
    if (answer->error_code != 0)
        return nic.hwrm->refused(hsi::ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, answer->error_code);
    if (auto r = nic.hwrm->too_short(hsi::ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, answer->resp_len,
                                     offsetof(hsi::BackingStoreQcapsResponse, reserved_82));
        !r)
        return r;
    const hsi::BackingStoreQcapsResponse& q = answer->response;
    const auto mask = q.ctx_init_mask.get();

    unsigned fp_rings = q.tqm_fp_rings_count;
    if (fp_rings == 0) {
        auto queues = cos_queues(nic);
        if (!queues) return std::unexpected(std::move(queues).error());
        fp_rings = *queues;
    }
    fp_rings = std::min(fp_rings, 8u);

    const std::uint64_t l2 = q.qp_max_l2_entries, qp1 = q.qp_min_qp1_entries;
    const std::uint64_t extra_qps =
        std::min<std::uint64_t>(nic.options.max_qps, q.qp_max_entries > l2 + qp1 ? q.qp_max_entries - l2 - qp1 : 0);
    const auto qps = static_cast<std::uint32_t>(l2 + qp1 + extra_qps);
    const std::uint32_t srqs = q.srq_max_l2_entries;
    const std::uint64_t cq_l2 = q.cq_max_l2_entries;
    const auto cqs = static_cast<std::uint32_t>(
        cq_l2 + std::min<std::uint64_t>(nic.options.max_cqs, q.cq_max_entries > cq_l2 ? q.cq_max_entries - cq_l2 : 0));
    const std::uint32_t stats = std::min<std::uint32_t>(q.stat_max_entries, 16);
    const std::uint32_t vnics = std::uint32_t{q.vnic_max_vnic_entries} + q.vnic_max_ring_table_entries;
    const std::uint64_t units = q.mrav_num_entries_units;
    // With units, num_mr / units fits the 16 bits of its half of mrav_num_entries.
    const std::uint64_t mr_most = units != 0 ? 0xFFFF * units : q.mrav_max_entries.get();
    const std::uint64_t num_mr = std::min<std::uint64_t>({nic.options.max_mrs, q.mrav_max_entries.get(), mr_most}) /
                                 std::max<std::uint64_t>(units, 1) * std::max<std::uint64_t>(units, 1);
    const std::uint64_t tqm_qps = 2 * (extra_qps + qp1);
    const std::uint32_t tqm_sp =
        clamp_multiple(vnics + l2 + tqm_qps + q.tqm_min_entries_per_ring, q.tqm_min_entries_per_ring,
                       q.tqm_max_entries_per_ring, q.tqm_entries_multiple);
    const std::uint32_t tqm_fp =
        clamp_multiple(l2 + tqm_qps, q.tqm_min_entries_per_ring, q.tqm_max_entries_per_ring, q.tqm_entries_multiple);
    using L = hsi::PblLevel;
    std::vector<Table> tables = {
        {Kind::QPC, qps, q.qp_entry_size, q.qp_init_offset, (mask & 0x01) != 0, L::LVL_2},
        {Kind::SRQ, srqs, q.srq_entry_size, q.srq_init_offset, (mask & 0x02) != 0, L::LVL_2},
        {Kind::CQ, cqs, q.cq_entry_size, q.cq_init_offset, (mask & 0x04) != 0, L::LVL_2},
        {Kind::VNIC, vnics, q.vnic_entry_size, q.vnic_init_offset, (mask & 0x08) != 0, L::LVL_1},
        {Kind::STAT, stats, q.stat_entry_size, q.stat_init_offset, (mask & 0x10) != 0, L::LVL_1},
        {Kind::TQM_SP, tqm_sp, q.tqm_entry_size, 0, false, L::LVL_2},
        {Kind::MRAV, static_cast<std::uint32_t>(num_mr), q.mrav_entry_size, q.mrav_init_offset, (mask & 0x20) != 0,
         L::LVL_2},
        {Kind::TIM, qps, q.tim_entry_size, 0, false, L::LVL_1},
    };
    for (unsigned r = 0; r < fp_rings; ++r)
        tables.push_back({static_cast<Kind>(static_cast<unsigned>(Kind::TQM_RING0) + r), tqm_fp, q.tqm_entry_size, 0,
                          false, L::LVL_1});
    std::erase_if(tables, [](const Table& t) { return t.bytes() == 0; });

    // The bound, before any allocation.
    std::uint64_t total = 0;
    std::string asked;
    for (const Table& t : tables) {
        const std::uint64_t pages = (t.bytes() + page_bytes - 1) / page_bytes;
        total += pages * page_bytes;
        asked += (asked.empty() ? "" : ", ") + std::string(name(t.kind)) + " " + std::to_string(t.entries) + " x " +
                 std::to_string(t.entry_size) + " bytes";
        if (pages > most_pages)
            return fail(nic.bus, ": HWRM_FUNC_BACKING_STORE_QCAPS asks for ", std::to_string(t.entries), " ",
                        name(t.kind), " entries of ", std::to_string(t.entry_size), " bytes (", text::bytes(t.bytes()),
                        "), more than a level-2 page list of 4 KiB pages holds (", text::bytes(most_pages * page_bytes),
                        ")");
    }
    if (total > nic.options.max_context_bytes)
        return fail(nic.bus, ": HWRM_FUNC_BACKING_STORE_QCAPS asks for ", text::bytes(total), " of context memory (",
                    asked, "), more than Options::max_context_bytes (", text::bytes(nic.options.max_context_bytes),
                    ")");

    hsi::BackingStoreCfgRequest request{};
    for (const Table& t : tables)
        if (auto r = give(nic, t, q.ctx_kind_initializer, request); !r) return r;
    request.flags = static_cast<std::uint32_t>(hsi::backing_store::FLAGS_MRAV_RESERVATION_SPLIT(units != 0 ? 1 : 0));
    request.qp_num_entries = qps;
    request.qp_num_qp1_entries = static_cast<std::uint16_t>(qp1);
    request.qp_num_l2_entries = static_cast<std::uint16_t>(l2);
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
    request.tqm_sp_num_entries = tqm_sp;
    for (unsigned r = 0; r < fp_rings; ++r) request.tqm_ring_num_entries[r] = tqm_fp;
    request.tqm_entry_size = q.tqm_entry_size;
    request.mrav_num_entries = units != 0 ? static_cast<std::uint32_t>(hsi::backing_store::mrav_num_mr(num_mr / units) |
                                                                       hsi::backing_store::mrav_num_ah(0))
                                          : static_cast<std::uint32_t>(num_mr);
    request.mrav_entry_size = q.mrav_entry_size;
    request.tim_num_entries = qps;
    request.tim_entry_size = q.tim_entry_size;
    // Linux's bnxt_hwrm_func_backing_store_cfg: the legacy 256 bytes where the firmware
    // takes fewer than the whole request.
    const std::size_t length =
        nic.hwrm->max_request_bytes() >= sizeof request ? sizeof request : hsi::backing_store::legacy_request_bytes;
    auto cfg = nic.hwrm->ask<hsi::HwrmErrorResponse>(hsi::ReqType::HWRM_FUNC_BACKING_STORE_CFG, request, length);
    if (!cfg) return std::unexpected(std::move(cfg).error());
    if (cfg->error_code != 0) return nic.hwrm->refused(hsi::ReqType::HWRM_FUNC_BACKING_STORE_CFG, cfg->error_code);
    return {};
}

}  // namespace rig::bnxt

// Context memory of the model (Linux's bnxt_hsi.h: hwrm_func_backing_store_qcaps_output, hwrm_func_backing_store_cfg_input): what HWRM_FUNC_BACKING_STORE_QCAPS
// reports (ModelOptions::backing_store) and the checks of HWRM_FUNC_BACKING_STORE_CFG. The
// model keeps its own state, so it never writes the pages; but it takes a configuration
// only where the chip could use it, and its RoCE objects then fit in what it was given.
//
// The rule, for each kind the request enables (bits 0..15 of `enables`; TQM rings 8..10,
// bits 16..18, and any other bit are refused: the model reports at most 8 fast-path rings):
//   - its entries lie within what QCAPS allows: QP contexts at most qp_max_entries and at
//     least the L2 and QP1 shares, which lie within qp_max_l2_entries and at least
//     qp_min_qp1_entries; CQ contexts likewise with cq_max_l2_entries; STAT at most
//     stat_max_entries; each TQM ring (slow path and fast path 0..n-1, n the count QCAPS
//     gives or else QUEUE_QPORTCFG's queues) between tqm_min_ and tqm_max_entries_per_ring
//     and a multiple of tqm_entries_multiple; TIM at most tim_max_entries; MRAV at most
//     mrav_max_entries, counted as num_mr and num_ah in units of mrav_num_entries_units
//     where the request sets MRAV_RESERVATION_SPLIT (which it must where the units are
//     non-zero, as Linux's bnxt_hwrm_func_backing_store_cfg does);
//   - its entry size is the one QCAPS reported; its page size a PG code (§2.3) and its
//     level 0, 1 or 2, with level 0 naming one page and level 1 at most 512;
//   - its page directory is page aligned and readable, and each PDE and PTE that names a
//     page of the table carries VALID (§2.1).
// A kind QCAPS reports no entry size for (SRQ, VNIC) cannot be enabled. Any failure is
// INVALID_PARAMS (ENABLES: INVALID_ENABLES) and leaves the function without context
// memory. The growth rule applies: a shorter (legacy, 256-byte) request reads its missing
// fields as 0.
#include <algorithm>

#include "firmware.hpp"
#include "rig/bnxt/hsi/pbl.hpp"

namespace rig::bnxt::sim::detail {

using hsi::HwrmError;
using Kind = hsi::BackingStoreKind;

namespace {

constexpr std::uint32_t kind_bit(Kind k) { return std::uint32_t{1} << static_cast<unsigned>(k); }
constexpr std::uint32_t known_kinds = 0xFFFF;  // QP .. TIM

unsigned tqm_fp_rings(const ModelOptions& o) {
    const unsigned n = o.backing_store.tqm_fp_rings_count != 0
                           ? o.backing_store.tqm_fp_rings_count
                           : std::min(o.cos_queues, hsi::queue_qportcfg::max_queues);
    return std::min(n, 8u);
}

}  // namespace

Firmware::HwrmAnswer Firmware::func_backing_store_qcaps(std::span<const std::byte>) {
    const BackingStoreCaps& c = options_.backing_store;
    hsi::BackingStoreQcapsResponse r{};
    r.qp_max_entries = c.qp_max_entries;
    r.qp_min_qp1_entries = c.qp_min_qp1_entries;
    r.qp_max_l2_entries = c.qp_max_l2_entries;
    r.qp_entry_size = c.qp_entry_size;
    r.cq_max_l2_entries = c.cq_max_l2_entries;
    r.cq_max_entries = c.cq_max_entries;
    r.cq_entry_size = c.cq_entry_size;
    r.stat_max_entries = c.stat_max_entries;
    r.stat_entry_size = c.stat_entry_size;
    r.tqm_entry_size = c.tqm_entry_size;
    r.tqm_min_entries_per_ring = c.tqm_min_entries_per_ring;
    r.tqm_max_entries_per_ring = c.tqm_max_entries_per_ring;
    r.tqm_entries_multiple = c.tqm_entries_multiple;
    r.tqm_fp_rings_count = c.tqm_fp_rings_count;
    r.mrav_max_entries = c.mrav_max_entries;
    r.mrav_entry_size = c.mrav_entry_size;
    r.mrav_num_entries_units = c.mrav_num_entries_units;
    r.tim_entry_size = c.tim_entry_size;
    r.tim_max_entries = c.tim_max_entries;
    r.header.resp_len = static_cast<std::uint16_t>(sizeof r);
    r.valid = hsi::hwrm::valid;
    return {HwrmError::SUCCESS, bytes_of(r)};
}

Firmware::HwrmAnswer Firmware::func_backing_store_cfg(std::span<const std::byte> request) {
    return {configure_backing_store(request), {}};
}

HwrmError Firmware::configure_backing_store(std::span<const std::byte> request) {
    const auto q = load<hsi::BackingStoreCfgRequest>(request);
    const BackingStoreCaps& c = options_.backing_store;
    context_ = ContextMemory{};
    const std::uint32_t enables = q.enables;
    const unsigned fp_rings = tqm_fp_rings(options_);
    std::uint32_t allowed = known_kinds;
    allowed &= ~(kind_bit(Kind::SRQ) | kind_bit(Kind::VNIC));  // QCAPS gives them no entry size
    for (unsigned r = fp_rings; r < 8; ++r)
        allowed &= ~kind_bit(static_cast<Kind>(static_cast<unsigned>(Kind::TQM_RING0) + r));
    if ((enables & ~allowed) != 0) return HwrmError::INVALID_ENABLES;

    const bool split = hsi::backing_store::FLAGS_MRAV_RESERVATION_SPLIT.of(q.flags) != 0;
    if ((q.flags.get() & ~std::uint32_t{hsi::backing_store::FLAGS_MRAV_RESERVATION_SPLIT(1)}) != 0 ||
        split != (c.mrav_num_entries_units != 0))
        return HwrmError::INVALID_FLAGS;

    // Each enabled kind: its entries and their size, then its pages.
    auto table_ok = [&](Kind kind, std::uint64_t entries, std::uint16_t entry_size, std::uint16_t expected_size) {
        if (entries == 0 || entry_size == 0 || entry_size != expected_size) return false;
        const auto k = static_cast<std::size_t>(kind);
        const auto level = static_cast<unsigned>(hsi::backing_store::lvl.of(q.pg_size_lvl[k]));
        const unsigned page_log2 =
            hsi::pg_size_log2(static_cast<std::uint8_t>(hsi::backing_store::pg_size.of(q.pg_size_lvl[k])));
        const std::uint64_t dir = q.page_dir[k];
        if (level > 2 || page_log2 == 0 || dir == 0 || (dir & (hsi::pte::table_page_bytes - 1)) != 0) return false;
        const std::uint64_t page = std::uint64_t{1} << page_log2;
        const std::uint64_t pages = (entries * entry_size + page - 1) / page;
        const std::uint64_t per = hsi::pte::entries_per_page;
        if ((level == 0 && pages != 1) || (level == 1 && pages > per) || (level == 2 && pages > per * per))
            return false;
        if (level == 0) return (dir & (page - 1)) == 0;
        // The directory, as the chip walks it: every entry that names a page of the table.
        auto valid_entries = [&](std::uint64_t table, std::uint64_t n) {
            Bytes raw(n * hsi::pte::entry_bytes);
            if (!bus_.read(table, raw)) return std::optional<std::vector<std::uint64_t>>{};
            std::vector<std::uint64_t> out(n);
            for (std::uint64_t i = 0; i < n; ++i) {
                out[i] = load<rig::little_endian::Le64>(std::span<const std::byte>(raw).subspan(i * 8, 8));
                if (hsi::pte::VALID.of(out[i]) == 0) return std::optional<std::vector<std::uint64_t>>{};
            }
            return std::optional(std::move(out));
        };
        if (level == 1) return valid_entries(dir, pages).has_value();
        const auto pdes = valid_entries(dir, (pages + per - 1) / per);
        if (!pdes) return false;
        for (std::uint64_t t = 0; t < pdes->size(); ++t)
            if (!valid_entries((*pdes)[t] & hsi::pte::address_mask, std::min(per, pages - t * per))) return false;
        return true;
    };
    auto on = [&](Kind k) { return (enables & kind_bit(k)) != 0; };

    std::uint32_t roce_qps = 0, roce_cqs = 0, mrs = 0;
    if (on(Kind::QPC)) {
        const std::uint32_t l2 = q.qp_num_l2_entries, qp1 = q.qp_num_qp1_entries, total = q.qp_num_entries;
        if (l2 > c.qp_max_l2_entries || qp1 < c.qp_min_qp1_entries || total > c.qp_max_entries || total < l2 + qp1 ||
            !table_ok(Kind::QPC, total, q.qp_entry_size, c.qp_entry_size))
            return HwrmError::INVALID_PARAMS;
        roce_qps = total - l2 - qp1;
    }
    if (on(Kind::CQ)) {
        const std::uint32_t l2 = q.cq_num_l2_entries, total = q.cq_num_entries;
        if (l2 > c.cq_max_l2_entries || total > c.cq_max_entries || total < l2 ||
            !table_ok(Kind::CQ, total, q.cq_entry_size, c.cq_entry_size))
            return HwrmError::INVALID_PARAMS;
        roce_cqs = total - l2;
    }
    if (on(Kind::STAT) && (q.stat_num_entries > c.stat_max_entries ||
                           !table_ok(Kind::STAT, q.stat_num_entries, q.stat_entry_size, c.stat_entry_size)))
        return HwrmError::INVALID_PARAMS;
    auto tqm_ok = [&](Kind k, std::uint32_t entries) {
        const std::uint32_t multiple = std::max<std::uint32_t>(1, c.tqm_entries_multiple);
        return entries >= c.tqm_min_entries_per_ring && entries <= c.tqm_max_entries_per_ring &&
               entries % multiple == 0 && table_ok(k, entries, q.tqm_entry_size, c.tqm_entry_size);
    };
    if (on(Kind::TQM_SP) && !tqm_ok(Kind::TQM_SP, q.tqm_sp_num_entries)) return HwrmError::INVALID_PARAMS;
    for (unsigned r = 0; r < fp_rings; ++r) {
        const auto k = static_cast<Kind>(static_cast<unsigned>(Kind::TQM_RING0) + r);
        if (on(k) && !tqm_ok(k, q.tqm_ring_num_entries[r])) return HwrmError::INVALID_PARAMS;
    }
    if (on(Kind::MRAV)) {
        const std::uint32_t n = q.mrav_num_entries;
        const std::uint64_t units = c.mrav_num_entries_units;
        const std::uint64_t num_mr = split ? hsi::backing_store::mrav_num_mr.of(n) * units : n;
        const std::uint64_t num_ah = split ? hsi::backing_store::mrav_num_ah.of(n) * units : 0;
        if (num_mr + num_ah > c.mrav_max_entries ||
            !table_ok(Kind::MRAV, num_mr + num_ah, q.mrav_entry_size, c.mrav_entry_size))
            return HwrmError::INVALID_PARAMS;
        mrs = static_cast<std::uint32_t>(num_mr);
    }
    if (on(Kind::TIM) && (q.tim_num_entries > c.tim_max_entries ||
                          !table_ok(Kind::TIM, q.tim_num_entries, q.tim_entry_size, c.tim_entry_size)))
        return HwrmError::INVALID_PARAMS;

    // RoCE queue pairs need their timers and their transmit queues as well.
    const bool tqm = on(Kind::TQM_SP) && (fp_rings == 0 || on(Kind::TQM_RING0));
    context_.configured = true;
    context_.qps = on(Kind::TIM) && q.tim_num_entries >= q.qp_num_entries && tqm ? roce_qps : 0;
    context_.cqs = roce_cqs;
    context_.mrs = mrs;
    context_.request = q;
    return HwrmError::SUCCESS;
}

}  // namespace rig::bnxt::sim::detail

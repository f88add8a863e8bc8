// The HWRM channel of the model (docs/hsi.md §3): a request taken from the BAR0
// window (or, in short mode, fetched by DMA), executed, and its response DMA'd to
// resp_addr: every byte with `valid` = 0, then the `valid` byte = 1 (§3.1 "Model
// procedure"). A response carries the request's req_type and seq_id and resp_len = its
// size. Commands of §3.5 that the model does not implement answer CMD_NOT_SUPPORTED.
//
// Short mode (§3.1) only where VER_GET advertises it (ModelOptions::short_commands): a firmware
// without it reads the 16-byte descriptor as a request, whose cmpl_ring (the signature)
// makes it INVALID_PARAMS, answered at "resp_addr" (the descriptor's req_addr). A short
// request longer than max_ext_req_len is answered INVALID_PARAMS from its header alone.
//
// The bring-up order the firmware holds the driver to (Linux's bnxt_fw_init_one_p1 / _p2
// and bnxt_open send the commands in it), each refusal with its status [UNCERTAIN: the
// public sources give the order, not the status of a command sent out of it]:
//   - before HWRM_VER_GET tells the firmware the driver's interface version, every other
//     command: FAIL;
//   - before HWRM_FUNC_DRV_RGTR, the commands that take resources of the function
//     (FUNC_CFG, RING_ALLOC/FREE, STAT_CTX_ALLOC/FREE): RESOURCE_ACCESS_DENIED; what Linux
//     sends before registering (FUNC_RESET, FUNC_QCAPS, FUNC_QCFG, QUEUE_QPORTCFG and the
//     backing store, from bnxt_hwrm_func_qcaps) is accepted;
//   - before HWRM_FUNC_BACKING_STORE_CFG gave the chip its context memory, RING_ALLOC and
//     STAT_CTX_ALLOC: RESOURCE_ALLOC_ERROR (§3.11: "before any ring can be created").
// FUNC_RESET forgets the registration and the context memory; a Function Level Reset
// (power_on) forgets VER_GET too.
#include <algorithm>

#include "firmware.hpp"
#include "rig/bnxt/hsi/regs.hpp"

namespace rig::bnxt::sim::detail {

using hsi::HwrmError;
using hsi::ReqType;

namespace {

constexpr std::uint32_t nq_max_length = 1u << 17;  // §3.12: Linux's NQ size, the largest the model takes

template <class Response>
Bytes response(Response r) {
    r.header.resp_len = static_cast<std::uint16_t>(sizeof(Response));
    r.valid = hsi::hwrm::valid;
    return bytes_of(r);
}

Bytes empty_response() { return response(hsi::HwrmErrorResponse{}); }

}  // namespace

void Firmware::hwrm(Bytes window) {
    ++counters_.hwrm_commands;
    Bytes request = std::move(window);
    const auto descriptor = load<hsi::HwrmShortRequest>(request);
    bool too_long = false;
    if (options_.short_commands && descriptor.signature == hsi::hwrm::short_signature) {
        // §3.1 short mode: the full request lives in DMA memory.
        const std::size_t size = descriptor.size;
        if (size < sizeof(hsi::HwrmRequestHeader)) {
            ++counters_.bad_descriptors;  // no response address to answer on
            return;
        }
        too_long = size > options_.max_ext_req_len;
        request.assign(too_long ? sizeof(hsi::HwrmRequestHeader) : size, std::byte{0});
        if (!bus_.read(descriptor.req_addr, request)) return;  // counted; nowhere to answer
    }
    const auto header = load<hsi::HwrmRequestHeader>(request);
    const auto fault = faults_.take_hwrm(header.req_type);
    if (fault && fault->kind == FaultKind::drop) return;

    HwrmError error = HwrmError::SUCCESS;
    Bytes out;
    if (fault && fault->kind == FaultKind::refuse) {
        error = static_cast<HwrmError>(fault->code);
    } else if (too_long || header.cmpl_ring != hsi::hwrm::cmpl_ring_none ||
               header.target_id != hsi::hwrm::target_id_self) {
        // The model has no completion rings and no other functions to act for.
        error = HwrmError::INVALID_PARAMS;
    } else if (const HwrmError order = out_of_order(static_cast<ReqType>(header.req_type.get()));
               order != HwrmError::SUCCESS) {
        error = order;
    } else {
        out = hwrm_execute(request, error);
    }
    if (error != HwrmError::SUCCESS || out.empty() || (fault && fault->kind == FaultKind::truncate))
        out = empty_response();
    auto h = load<hsi::HwrmResponseHeader>(out);
    h.error_code = static_cast<std::uint16_t>(error);
    h.req_type = header.req_type;
    h.seq_id = static_cast<std::uint16_t>(header.seq_id - (fault && fault->kind == FaultKind::stale ? 1 : 0));
    h.resp_len = static_cast<std::uint16_t>(out.size());
    rig::little_endian::store(std::span(out), h);
    // §3.1: every byte with valid = 0, then the valid byte alone. seq_id and resp_len
    // (bytes 4..7), which the driver polls first, go last as one aligned 4-byte write (a
    // release, rig/sim/device.hpp), so a driver that sees them sees the rest (TSan).
    faults_.tamper(testing::Written::hwrm_response, std::span(out).first(out.size() - 1));  // a hostile device
    out.back() = std::byte{0};
    if (!bus_.write(header.resp_addr, std::span(out).first(4))) return;
    if (!bus_.write(header.resp_addr + 8, std::span(out).subspan(8))) return;
    if (!bus_.write(header.resp_addr + 4, std::span(out).subspan(4, 4))) return;
    const std::byte valid{hsi::hwrm::valid};
    bus_.write(header.resp_addr + out.size() - 1, std::span(&valid, 1));
}

HwrmError Firmware::out_of_order(ReqType type) const {
    if (type == ReqType::HWRM_VER_GET) return HwrmError::SUCCESS;
    if (!version_known_) return HwrmError::FAIL;
    switch (type) {
    case ReqType::HWRM_FUNC_CFG:
    case ReqType::HWRM_RING_FREE:
    case ReqType::HWRM_STAT_CTX_FREE:
        return driver_registered_ ? HwrmError::SUCCESS : HwrmError::RESOURCE_ACCESS_DENIED;
    case ReqType::HWRM_RING_ALLOC:
    case ReqType::HWRM_STAT_CTX_ALLOC:
        if (!driver_registered_) return HwrmError::RESOURCE_ACCESS_DENIED;
        return context_.configured ? HwrmError::SUCCESS : HwrmError::RESOURCE_ALLOC_ERROR;
    default: return HwrmError::SUCCESS;
    }
}

Bytes Firmware::hwrm_execute(std::span<const std::byte> request, HwrmError& error) {
    const auto header = load<hsi::HwrmRequestHeader>(request);
    const auto& limits = options_.limits;
    switch (static_cast<ReqType>(header.req_type.get())) {
    case ReqType::HWRM_VER_GET: {
        // §3.6 model semantics: always succeed, chip 0x1750, HSI 1.10.3; short mode
        // where ModelOptions::short_commands.
        version_known_ = true;
        hsi::VerGetResponse r{};
        r.hwrm_intf_maj_8b = 1;
        r.hwrm_intf_min_8b = 10;
        r.hwrm_intf_upd_8b = 3;
        r.hwrm_fw_maj_8b = 230;
        r.roce_fw_8b = {230, 0, 0, 0};
        r.chip_num = hsi::pci_device_bcm57508;
        r.max_req_win_len = 128;
        r.max_resp_len = 704;
        r.def_req_timeout = hsi::hwrm::def_req_timeout_ms;
        r.flags = static_cast<std::uint8_t>(hsi::ver_get::EXT_VER_AVAIL(1));
        r.always_1 = 1;
        r.hwrm_intf_major = 1;
        r.hwrm_intf_minor = 10;
        r.hwrm_intf_build = 3;
        r.hwrm_intf_patch = 129;
        r.hwrm_fw_major = 230;
        r.roce_fw = {230, 0, 0, 0};
        if (options_.short_commands) {
            r.dev_caps_cfg = static_cast<std::uint32_t>(hsi::ver_get::SHORT_CMD_SUPPORTED(1));
            r.max_ext_req_len = options_.max_ext_req_len;
        }
        r.max_req_timeout = hsi::hwrm::max_timeout_ms;
        return response(r);
    }
    case ReqType::HWRM_FUNC_RESET: function_reset(); return empty_response();
    case ReqType::HWRM_FUNC_QCAPS: {
        const auto q = load<hsi::FuncQcapsRequest>(request);
        if (q.fid != hsi::hwrm::fid_self && q.fid != 0) {
            error = HwrmError::INVALID_PARAMS;
            return {};
        }
        hsi::FuncQcapsResponse r{};
        r.fid = 0;
        r.port_id = 0;
        r.flags =
            static_cast<std::uint32_t>(hsi::func_qcaps::ROCE_V1_SUPPORTED(1) | hsi::func_qcaps::ROCE_V2_SUPPORTED(1));
        r.mac_address = options_.mac;
        r.max_rsscos_ctx = 0;
        r.max_cmpl_rings = limits.max_rings;
        r.max_stat_ctx = limits.max_stat_ctx;
        return response(r);
    }
    case ReqType::HWRM_FUNC_QCFG: {
        const auto q = load<hsi::FuncQcfgRequest>(request);
        if (q.fid != hsi::hwrm::fid_self && q.fid != 0) {
            error = HwrmError::INVALID_PARAMS;
            return {};
        }
        hsi::FuncQcfgResponse r{};
        r.fid = 0;
        r.mac_address = options_.mac;
        r.alloc_cmpl_rings = limits.max_rings;
        r.admin_mtu = options_.port_mtu;
        r.mru = options_.port_mtu;
        r.alloc_msix = static_cast<std::uint16_t>(options_.msix_vectors);
        r.l2_doorbell_bar_size_kb = static_cast<std::uint16_t>(hsi::bar2::doorbell_page_pf / 1024);
        return response(r);
    }
    case ReqType::HWRM_FUNC_CFG:  // resource reservation: nothing to reserve in the model
        return empty_response();
    case ReqType::HWRM_FUNC_DRV_RGTR: {
        driver_registered_ = true;
        hsi::DrvRgtrResponse r{};
        return response(r);
    }
    case ReqType::HWRM_FUNC_DRV_UNRGTR: driver_registered_ = false; return empty_response();
    case ReqType::HWRM_FUNC_BACKING_STORE_QCAPS: return backing_store_qcaps();
    case ReqType::HWRM_FUNC_BACKING_STORE_CFG:
        error = backing_store_cfg(request);
        return error == HwrmError::SUCCESS ? empty_response() : Bytes{};
    case ReqType::HWRM_QUEUE_QPORTCFG: {
        // One port, TX and RX alike: queue ids 0..n-1, every queue lossy.
        hsi::QueueQportcfgResponse r{};
        r.max_configurable_queues = std::min(options_.cos_queues, hsi::queue_qportcfg::max_queues);
        for (std::uint8_t q = 0; q < r.max_configurable_queues; ++q) r.queue_id_service_profile[2u * q] = q;
        return response(r);
    }
    case ReqType::HWRM_RING_ALLOC: {
        const auto q = load<hsi::RingAllocRequest>(request);
        // §3.12: the model has NQ-type rings only (no L2 rings: a gap, stated).
        const bool power_of_two = q.length >= 2 && (q.length & (q.length - 1)) == 0;
        const bool msix = q.int_mode == static_cast<std::uint8_t>(hsi::IntMode::MSIX);
        if (q.ring_type != static_cast<std::uint8_t>(hsi::RingType::NQ) || !power_of_two || q.length > nq_max_length ||
            q.page_tbl_depth > 1 || (q.page_tbl_addr & 0xFFF) != 0 || (msix && q.logical_id >= options_.msix_vectors) ||
            (q.page_tbl_depth == 1 && std::uint64_t{q.length} * 16 > 512 * 4096)) {
            error = HwrmError::INVALID_PARAMS;
            return {};
        }
        if (rings_.size() >= limits.max_rings) {
            error = HwrmError::RESOURCE_ALLOC_ERROR;
            return {};
        }
        // Ring ids start at 0x40 (non-zero, §3.12) and never collide.
        std::uint16_t id = 0;
        do {
            id = static_cast<std::uint16_t>(0x40 + next_ring_id_++ % 0xF00);
        } while (rings_.contains(id));
        NqRing ring;
        ring.id = id;
        ring.logical_id = q.logical_id;
        ring.int_mode = static_cast<hsi::IntMode>(q.int_mode);
        // Depth 0: one contiguous buffer (page_size is ignored, [CORRECTED]); depth 1:
        // a page of PTEs naming 4 KiB pages.
        ring.memory = PageList(q.page_tbl_depth, 12, q.page_tbl_addr);
        ring.length = q.length;
        rings_.emplace(id, std::move(ring));
        hsi::RingAllocResponse r{};
        r.ring_id = id;
        r.logical_ring_id = q.logical_id;
        return response(r);
    }
    case ReqType::HWRM_RING_FREE: {
        const auto q = load<hsi::RingFreeRequest>(request);
        auto it = rings_.find(q.ring_id);
        if (q.ring_type != static_cast<std::uint8_t>(hsi::RingType::NQ) || it == rings_.end()) {
            error = HwrmError::INVALID_PARAMS;
            return {};
        }
        if (it->second.cq_users > 0) {
            error = HwrmError::RESOURCE_LOCKED;  // CQs still notify it
            return {};
        }
        if (channel_.latched && channel_.creq == q.ring_id) channel_.latched = false;
        rings_.erase(it);
        return empty_response();
    }
    case ReqType::HWRM_STAT_CTX_ALLOC: {
        if (stat_ctxs_.size() >= limits.max_stat_ctx) {
            error = HwrmError::RESOURCE_ALLOC_ERROR;
            return {};
        }
        std::uint32_t id = 0;
        do {
            id = 1 + next_stat_ctx_++ % 0xFFFF;  // never 0: a field left unfilled
        } while (stat_ctxs_.contains(id));
        stat_ctxs_.emplace(id, false);
        hsi::StatCtxAllocResponse r{};
        r.stat_ctx_id = id;
        return response(r);
    }
    case ReqType::HWRM_STAT_CTX_FREE: {
        const auto q = load<hsi::StatCtxFreeRequest>(request);
        auto it = stat_ctxs_.find(q.stat_ctx_id);
        if (it == stat_ctxs_.end()) {
            error = HwrmError::INVALID_PARAMS;
            return {};
        }
        if (it->second) {
            error = HwrmError::RESOURCE_LOCKED;  // INITIALIZE_FW holds it until DEINITIALIZE_FW
            return {};
        }
        stat_ctxs_.erase(it);
        return empty_response();
    }
    default:
        // FUNC_RESOURCE_QCAPS, BACKING_STORE_QCFG and everything else.
        error = HwrmError::CMD_NOT_SUPPORTED;
        return {};
    }
}

void Firmware::function_reset() {
    // §3.7: every ring, stats context and all RoCE state of the function goes; the RoCE
    // channel returns to "not initialized".
    destroy_roce_objects();
    gids_.assign(options_.limits.max_gid, std::nullopt);
    channel_ = Channel{};
    rings_.clear();
    stat_ctxs_.clear();
    driver_registered_ = false;
    context_ = ContextMemory{};
}

void Firmware::power_on() {
    function_reset();
    version_known_ = false;
    next_ring_id_ = 0;
    next_stat_ctx_ = 0;
    next_cq_ = 0;
    next_qpn_ = 2;
    next_mr_index_ = 0;
}

}  // namespace rig::bnxt::sim::detail

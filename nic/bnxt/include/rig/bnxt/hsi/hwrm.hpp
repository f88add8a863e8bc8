// rig/bnxt/hsi/hwrm.hpp: the HWRM channel, the firmware's management interface
// (docs/hsi.md §3). A request is written into the BAR0 window with 32-bit stores and
// submitted by the trigger (§3.1); the firmware DMAs the response to `resp_addr`, every
// byte with `valid` = 0 first and the `valid` byte (the last one) = 1 last. Layouts,
// codes and flag bits only: no state. Responses grow between HSI revisions (§0): a reader
// uses only the bytes inside `resp_len`; the structs below are the HSI 1.10.3 sizes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "rig/little_endian.hpp"

namespace rig::bnxt::hsi {

using rig::little_endian::Field;
using rig::little_endian::Le16;
using rig::little_endian::Le32;
using rig::little_endian::Le64;

// §3.5: command numbers (req_type).
enum class ReqType : std::uint16_t {
    HWRM_VER_GET = 0x0000,
    HWRM_FUNC_RESET = 0x0011,
    HWRM_FUNC_QCAPS = 0x0015,
    HWRM_FUNC_QCFG = 0x0016,
    HWRM_FUNC_CFG = 0x0017,  // optional
    HWRM_FUNC_DRV_UNRGTR = 0x001A,
    HWRM_FUNC_DRV_RGTR = 0x001D,
    HWRM_QUEUE_QPORTCFG = 0x0030,  // optional
    HWRM_RING_ALLOC = 0x0050,
    HWRM_RING_FREE = 0x0051,
    HWRM_STAT_CTX_ALLOC = 0x00B0,
    HWRM_STAT_CTX_FREE = 0x00B1,
    HWRM_FUNC_RESOURCE_QCAPS = 0x0190,  // optional
    HWRM_FUNC_BACKING_STORE_QCAPS = 0x0192,
    HWRM_FUNC_BACKING_STORE_CFG = 0x0193,
    HWRM_FUNC_BACKING_STORE_QCFG = 0x0194,
};

// The command's name as §3.5 spells it; "HWRM command 0x…" is the caller's for others.
constexpr std::string_view name(ReqType t) {
    switch (t) {
    case ReqType::HWRM_VER_GET: return "HWRM_VER_GET";
    case ReqType::HWRM_FUNC_RESET: return "HWRM_FUNC_RESET";
    case ReqType::HWRM_FUNC_QCAPS: return "HWRM_FUNC_QCAPS";
    case ReqType::HWRM_FUNC_QCFG: return "HWRM_FUNC_QCFG";
    case ReqType::HWRM_FUNC_CFG: return "HWRM_FUNC_CFG";
    case ReqType::HWRM_FUNC_DRV_UNRGTR: return "HWRM_FUNC_DRV_UNRGTR";
    case ReqType::HWRM_FUNC_DRV_RGTR: return "HWRM_FUNC_DRV_RGTR";
    case ReqType::HWRM_QUEUE_QPORTCFG: return "HWRM_QUEUE_QPORTCFG";
    case ReqType::HWRM_RING_ALLOC: return "HWRM_RING_ALLOC";
    case ReqType::HWRM_RING_FREE: return "HWRM_RING_FREE";
    case ReqType::HWRM_STAT_CTX_ALLOC: return "HWRM_STAT_CTX_ALLOC";
    case ReqType::HWRM_STAT_CTX_FREE: return "HWRM_STAT_CTX_FREE";
    case ReqType::HWRM_FUNC_RESOURCE_QCAPS: return "HWRM_FUNC_RESOURCE_QCAPS";
    case ReqType::HWRM_FUNC_BACKING_STORE_QCAPS: return "HWRM_FUNC_BACKING_STORE_QCAPS";
    case ReqType::HWRM_FUNC_BACKING_STORE_CFG: return "HWRM_FUNC_BACKING_STORE_CFG";
    case ReqType::HWRM_FUNC_BACKING_STORE_QCFG: return "HWRM_FUNC_BACKING_STORE_QCFG";
    }
    return "";
}

// §3.4: error_code of a response.
enum class HwrmError : std::uint16_t {
    SUCCESS = 0x0,
    FAIL = 0x1,
    INVALID_PARAMS = 0x2,
    RESOURCE_ACCESS_DENIED = 0x3,
    RESOURCE_ALLOC_ERROR = 0x4,
    INVALID_FLAGS = 0x5,
    INVALID_ENABLES = 0x6,
    UNSUPPORTED_TLV = 0x7,
    NO_BUFFER = 0x8,
    UNSUPPORTED_OPTION_ERR = 0x9,
    HOT_RESET_PROGRESS = 0xA,
    HOT_RESET_FAIL = 0xB,
    NO_FLOW_COUNTER_DURING_ALLOC = 0xC,
    KEY_HASH_COLLISION = 0xD,
    KEY_ALREADY_EXISTS = 0xE,
    HWRM_ERROR = 0xF,
    BUSY = 0x10,  // retry later
    RESOURCE_LOCKED = 0x11,
    PF_UNAVAILABLE = 0x12,
    ENTITY_NOT_PRESENT = 0x13,
    SECURE_SOC_ERROR = 0x14,
    TLV_ENCAPSULATED_RESPONSE = 0x8000,
    UNKNOWN_ERR = 0xFFFE,
    CMD_NOT_SUPPORTED = 0xFFFF,
};

// The code's name as §3.4 spells it; empty for a value the table does not list.
constexpr std::string_view name(HwrmError e) {
    switch (e) {
    case HwrmError::SUCCESS: return "SUCCESS";
    case HwrmError::FAIL: return "FAIL";
    case HwrmError::INVALID_PARAMS: return "INVALID_PARAMS";
    case HwrmError::RESOURCE_ACCESS_DENIED: return "RESOURCE_ACCESS_DENIED";
    case HwrmError::RESOURCE_ALLOC_ERROR: return "RESOURCE_ALLOC_ERROR";
    case HwrmError::INVALID_FLAGS: return "INVALID_FLAGS";
    case HwrmError::INVALID_ENABLES: return "INVALID_ENABLES";
    case HwrmError::UNSUPPORTED_TLV: return "UNSUPPORTED_TLV";
    case HwrmError::NO_BUFFER: return "NO_BUFFER";
    case HwrmError::UNSUPPORTED_OPTION_ERR: return "UNSUPPORTED_OPTION_ERR";
    case HwrmError::HOT_RESET_PROGRESS: return "HOT_RESET_PROGRESS";
    case HwrmError::HOT_RESET_FAIL: return "HOT_RESET_FAIL";
    case HwrmError::NO_FLOW_COUNTER_DURING_ALLOC: return "NO_FLOW_COUNTER_DURING_ALLOC";
    case HwrmError::KEY_HASH_COLLISION: return "KEY_HASH_COLLISION";
    case HwrmError::KEY_ALREADY_EXISTS: return "KEY_ALREADY_EXISTS";
    case HwrmError::HWRM_ERROR: return "HWRM_ERROR";
    case HwrmError::BUSY: return "BUSY";
    case HwrmError::RESOURCE_LOCKED: return "RESOURCE_LOCKED";
    case HwrmError::PF_UNAVAILABLE: return "PF_UNAVAILABLE";
    case HwrmError::ENTITY_NOT_PRESENT: return "ENTITY_NOT_PRESENT";
    case HwrmError::SECURE_SOC_ERROR: return "SECURE_SOC_ERROR";
    case HwrmError::TLV_ENCAPSULATED_RESPONSE: return "TLV_ENCAPSULATED_RESPONSE";
    case HwrmError::UNKNOWN_ERR: return "UNKNOWN_ERR";
    case HwrmError::CMD_NOT_SUPPORTED: return "CMD_NOT_SUPPORTED";
    }
    return "";
}

// §3.1, §3.2: values of the common header and transport.
namespace hwrm {
inline constexpr std::uint16_t cmpl_ring_none = 0xFFFF;   // answer by DMA only
inline constexpr std::uint16_t target_id_self = 0xFFFF;   // the function that sends it
inline constexpr std::uint16_t fid_self = 0xFFFF;         // FUNC_QCAPS/QCFG.fid
inline constexpr std::uint16_t short_signature = 0x4321;  // §3.1 short-mode descriptor
inline constexpr std::size_t max_req_len_default = 128;   // until VER_GET.max_req_win_len
inline constexpr std::size_t request_multiple = 8;        // requests are multiples of 8 bytes
inline constexpr std::size_t resp_addr_align = 16;
inline constexpr unsigned def_req_timeout_ms = 500;       // unless VER_GET.def_req_timeout
inline constexpr unsigned func_reset_timeout_factor = 4;  // HWRM_FUNC_RESET waits 4x
inline constexpr unsigned max_timeout_ms = 40'000;        // Linux's cap on any command
inline constexpr std::uint8_t valid = 1;                  // the last byte of a complete response
}  // namespace hwrm

// §3.2: the first 16 bytes of every request.
struct HwrmRequestHeader {
    Le16 req_type;   // ReqType
    Le16 cmpl_ring;  // hwrm::cmpl_ring_none: no completion ring, answer by DMA only
    Le16 seq_id;     // echoed in the response
    Le16 target_id;  // hwrm::target_id_self
    Le64 resp_addr;  // bus address of the response buffer, 16-byte aligned
};
static_assert(sizeof(HwrmRequestHeader) == 16);
static_assert(offsetof(HwrmRequestHeader, req_type) == 0 && offsetof(HwrmRequestHeader, cmpl_ring) == 2);
static_assert(offsetof(HwrmRequestHeader, seq_id) == 4 && offsetof(HwrmRequestHeader, target_id) == 6);
static_assert(offsetof(HwrmRequestHeader, resp_addr) == 8);
static_assert(std::has_unique_object_representations_v<HwrmRequestHeader>);

// §3.3: the first 8 bytes of every response; its last byte (resp_len - 1) is `valid`.
struct HwrmResponseHeader {
    Le16 error_code;  // HwrmError
    Le16 req_type;    // echo
    Le16 seq_id;      // echo
    Le16 resp_len;    // bytes of the whole response, the valid byte included
};
static_assert(sizeof(HwrmResponseHeader) == 8);
static_assert(offsetof(HwrmResponseHeader, error_code) == 0 && offsetof(HwrmResponseHeader, req_type) == 2);
static_assert(offsetof(HwrmResponseHeader, seq_id) == 4 && offsetof(HwrmResponseHeader, resp_len) == 6);
static_assert(std::has_unique_object_representations_v<HwrmResponseHeader>);

// §3.3: the generic 16-byte error response of any command (resp_len = 16). Commands whose
// response is "header + valid" (FUNC_RESET, DRV_UNRGTR, RING_FREE, STAT_CTX_FREE) use it too.
struct HwrmErrorResponse {
    HwrmResponseHeader header;
    Le32 opaque_0;
    Le16 opaque_1;
    std::uint8_t cmd_err;  // command-specific detail
    std::uint8_t valid;
};
static_assert(sizeof(HwrmErrorResponse) == 16);
static_assert(offsetof(HwrmErrorResponse, opaque_0) == 8 && offsetof(HwrmErrorResponse, opaque_1) == 12);
static_assert(offsetof(HwrmErrorResponse, cmd_err) == 14 && offsetof(HwrmErrorResponse, valid) == 15);
static_assert(std::has_unique_object_representations_v<HwrmErrorResponse>);

// §3.1: the short-mode descriptor written into the window instead of the request.
struct HwrmShortRequest {
    Le16 req_type;
    Le16 signature;  // hwrm::short_signature
    Le16 target_id;  // 0
    Le16 size;       // bytes of the full request
    Le64 req_addr;   // bus address of the full request
};
static_assert(sizeof(HwrmShortRequest) == 16);
static_assert(offsetof(HwrmShortRequest, signature) == 2 && offsetof(HwrmShortRequest, target_id) == 4);
static_assert(offsetof(HwrmShortRequest, size) == 6 && offsetof(HwrmShortRequest, req_addr) == 8);
static_assert(std::has_unique_object_representations_v<HwrmShortRequest>);

// §3.6 HWRM_VER_GET.
struct VerGetRequest {
    HwrmRequestHeader header;
    std::uint8_t hwrm_intf_maj;  // driver's HSI version (Linux 1.10.3)
    std::uint8_t hwrm_intf_min;
    std::uint8_t hwrm_intf_upd;
    std::array<std::uint8_t, 5> reserved_19;
};
static_assert(sizeof(VerGetRequest) == 24);
static_assert(offsetof(VerGetRequest, hwrm_intf_maj) == 16 && offsetof(VerGetRequest, hwrm_intf_min) == 17);
static_assert(offsetof(VerGetRequest, hwrm_intf_upd) == 18);
static_assert(std::has_unique_object_representations_v<VerGetRequest>);

// §3.6 response, 176 bytes in HSI 1.10.3 ([CORRECTED] offsets from 32 on).
struct VerGetResponse {
    HwrmResponseHeader header;
    std::uint8_t hwrm_intf_maj_8b;  // firmware's HSI version
    std::uint8_t hwrm_intf_min_8b;
    std::uint8_t hwrm_intf_upd_8b;
    std::uint8_t hwrm_intf_rsvd_8b;
    std::uint8_t hwrm_fw_maj_8b;
    std::uint8_t hwrm_fw_min_8b;
    std::uint8_t hwrm_fw_bld_8b;
    std::uint8_t hwrm_fw_rsvd_8b;
    std::array<std::uint8_t, 4> mgmt_fw_8b;
    std::array<std::uint8_t, 4> netctrl_fw_8b;
    Le32 dev_caps_cfg;  // ver_get::SHORT_CMD_SUPPORTED, ...
    std::array<std::uint8_t, 4> roce_fw_8b;
    std::array<char, 16> hwrm_fw_name;  // NUL-padded ASCII
    std::array<char, 16> mgmt_fw_name;
    std::array<char, 16> netctrl_fw_name;
    std::array<char, 16> active_pkg_name;  // older HSI: reserved
    std::array<char, 16> roce_fw_name;
    Le16 chip_num;  // 0x1750/0x1751/0x1752 on P5
    std::uint8_t chip_rev;
    std::uint8_t chip_metal;
    std::uint8_t chip_bond_id;
    std::uint8_t chip_platform_type;  // 0 ASIC, 1 FPGA, 2 Palladium
    Le16 max_req_win_len;             // new max_req_len for direct mode
    Le16 max_resp_len;
    Le16 def_req_timeout;  // ms
    std::uint8_t flags;    // ver_get::DEV_NOT_RDY, ...
    std::array<std::uint8_t, 2> reserved_125;
    std::uint8_t always_1;
    Le16 hwrm_intf_major;
    Le16 hwrm_intf_minor;
    Le16 hwrm_intf_build;
    Le16 hwrm_intf_patch;
    Le16 hwrm_fw_major;
    Le16 hwrm_fw_minor;
    Le16 hwrm_fw_build;
    Le16 hwrm_fw_patch;
    std::array<Le16, 4> mgmt_fw;  // major, minor, build, patch
    std::array<Le16, 4> netctrl_fw;
    std::array<Le16, 4> roce_fw;
    Le16 max_ext_req_len;  // longest short-mode request
    Le16 max_req_timeout;  // older HSI: reserved
    std::array<std::uint8_t, 3> reserved_172;
    std::uint8_t valid;
};
static_assert(sizeof(VerGetResponse) == 176);
static_assert(offsetof(VerGetResponse, hwrm_intf_maj_8b) == 8 && offsetof(VerGetResponse, hwrm_fw_maj_8b) == 12);
static_assert(offsetof(VerGetResponse, mgmt_fw_8b) == 16 && offsetof(VerGetResponse, netctrl_fw_8b) == 20);
static_assert(offsetof(VerGetResponse, dev_caps_cfg) == 24 && offsetof(VerGetResponse, roce_fw_8b) == 28);
static_assert(offsetof(VerGetResponse, hwrm_fw_name) == 32 && offsetof(VerGetResponse, mgmt_fw_name) == 48);
static_assert(offsetof(VerGetResponse, netctrl_fw_name) == 64 && offsetof(VerGetResponse, active_pkg_name) == 80);
static_assert(offsetof(VerGetResponse, roce_fw_name) == 96 && offsetof(VerGetResponse, chip_num) == 112);
static_assert(offsetof(VerGetResponse, chip_rev) == 114 && offsetof(VerGetResponse, chip_metal) == 115);
static_assert(offsetof(VerGetResponse, chip_bond_id) == 116 && offsetof(VerGetResponse, chip_platform_type) == 117);
static_assert(offsetof(VerGetResponse, max_req_win_len) == 118 && offsetof(VerGetResponse, max_resp_len) == 120);
static_assert(offsetof(VerGetResponse, def_req_timeout) == 122 && offsetof(VerGetResponse, flags) == 124);
static_assert(offsetof(VerGetResponse, always_1) == 127 && offsetof(VerGetResponse, hwrm_intf_major) == 128);
static_assert(offsetof(VerGetResponse, hwrm_fw_major) == 136 && offsetof(VerGetResponse, mgmt_fw) == 144);
static_assert(offsetof(VerGetResponse, netctrl_fw) == 152 && offsetof(VerGetResponse, roce_fw) == 160);
static_assert(offsetof(VerGetResponse, max_ext_req_len) == 168 && offsetof(VerGetResponse, max_req_timeout) == 170);
static_assert(offsetof(VerGetResponse, valid) == 175);
static_assert(std::has_unique_object_representations_v<VerGetResponse>);

namespace ver_get {
// dev_caps_cfg bits (others irrelevant here).
inline constexpr Field<2, 1> SHORT_CMD_SUPPORTED;
inline constexpr Field<3, 1> SHORT_CMD_REQUIRED;
inline constexpr Field<4, 1> KONG_MB_CHNL_SUPPORTED;
// flags bits.
inline constexpr Field<0, 1> DEV_NOT_RDY;
inline constexpr Field<1, 1> EXT_VER_AVAIL;
inline constexpr Field<2, 1> DEV_NOT_RDY_BACKING_STORE;
// §3.6: Linux needs firmware HSI >= 1.8.3 (maj << 16 | min << 8 | upd) for backing store.
inline constexpr std::uint32_t backing_store_min_spec = 0x10803;
}  // namespace ver_get

// §3.7 HWRM_FUNC_RESET; its response is an HwrmErrorResponse with error_code SUCCESS.
struct FuncResetRequest {
    HwrmRequestHeader header;
    Le32 enables;  // bit 0 VF_ID_VALID
    Le16 vf_id;
    std::uint8_t func_reset_level;  // FuncResetLevel
    std::uint8_t reserved_23;
};
static_assert(sizeof(FuncResetRequest) == 24);
static_assert(offsetof(FuncResetRequest, enables) == 16 && offsetof(FuncResetRequest, vf_id) == 20);
static_assert(offsetof(FuncResetRequest, func_reset_level) == 22);
static_assert(std::has_unique_object_representations_v<FuncResetRequest>);

enum class FuncResetLevel : std::uint8_t { RESETALL = 0, RESETME = 1, RESETCHILDREN = 2, RESETVF = 3 };

// §3.8 HWRM_FUNC_QCAPS; also the request layout of FUNC_QCFG (§3.9).
struct FuncQcapsRequest {
    HwrmRequestHeader header;
    Le16 fid;  // hwrm::fid_self
    std::array<std::uint8_t, 6> reserved_18;
};
static_assert(sizeof(FuncQcapsRequest) == 24);
static_assert(offsetof(FuncQcapsRequest, fid) == 16);
static_assert(std::has_unique_object_representations_v<FuncQcapsRequest>);
using FuncQcfgRequest = FuncQcapsRequest;

// §3.8 response, 144 bytes in HSI 1.10.3; only the fields the spec lists are named.
struct FuncQcapsResponse {
    HwrmResponseHeader header;
    Le16 fid;
    Le16 port_id;
    Le32 flags;                               // func_qcaps::ROCE_V2_SUPPORTED, ...
    std::array<std::uint8_t, 6> mac_address;  // byte 16 = first octet on the wire
    Le16 max_rsscos_ctx;
    Le16 max_cmpl_rings;
    Le16 max_tx_rings;
    Le16 max_rx_rings;
    Le16 max_l2_ctxs;
    Le16 max_vnics;
    Le16 first_vf_id;
    Le16 max_vfs;
    Le16 max_stat_ctx;
    std::array<std::uint8_t, 32> reserved_40;
    Le32 max_hw_ring_grps;
    std::array<std::uint8_t, 4> reserved_76;
    Le32 flags_ext;
    std::array<std::uint8_t, 4> reserved_84;
    Le32 flags_ext2;
    std::array<std::uint8_t, 51> reserved_92;
    std::uint8_t valid;
};
static_assert(sizeof(FuncQcapsResponse) == 144);
static_assert(offsetof(FuncQcapsResponse, fid) == 8 && offsetof(FuncQcapsResponse, port_id) == 10);
static_assert(offsetof(FuncQcapsResponse, flags) == 12 && offsetof(FuncQcapsResponse, mac_address) == 16);
static_assert(offsetof(FuncQcapsResponse, max_rsscos_ctx) == 22 && offsetof(FuncQcapsResponse, max_cmpl_rings) == 24);
static_assert(offsetof(FuncQcapsResponse, max_tx_rings) == 26 && offsetof(FuncQcapsResponse, max_rx_rings) == 28);
static_assert(offsetof(FuncQcapsResponse, max_l2_ctxs) == 30 && offsetof(FuncQcapsResponse, max_vnics) == 32);
static_assert(offsetof(FuncQcapsResponse, first_vf_id) == 34 && offsetof(FuncQcapsResponse, max_vfs) == 36);
static_assert(offsetof(FuncQcapsResponse, max_stat_ctx) == 38 && offsetof(FuncQcapsResponse, max_hw_ring_grps) == 72);
static_assert(offsetof(FuncQcapsResponse, flags_ext) == 80 && offsetof(FuncQcapsResponse, flags_ext2) == 88);
static_assert(offsetof(FuncQcapsResponse, valid) == 143);
static_assert(std::has_unique_object_representations_v<FuncQcapsResponse>);

namespace func_qcaps {
// flags: RoCE is usable only if ROCE_V1_SUPPORTED or ROCE_V2_SUPPORTED is set.
inline constexpr Field<0, 1> PUSH_MODE_SUPPORTED;
inline constexpr Field<3, 1> ROCE_V1_SUPPORTED;
inline constexpr Field<4, 1> ROCE_V2_SUPPORTED;
inline constexpr Field<23, 1> ERROR_RECOVERY_CAPABLE;
// flags_ext.
inline constexpr Field<26, 1> BS_V2_SUPPORTED;
inline constexpr Field<27, 1> BS_V2_REQUIRED;  // [P7]
inline constexpr Field<29, 1> DBR_PACING_SUPPORTED;
// flags_ext2.
inline constexpr Field<20, 1> ROCE_VF_RESOURCE_MGMT_SUPPORTED;
}  // namespace func_qcaps

// §3.9 HWRM_FUNC_QCFG response, 176 bytes in HSI 1.10.3.
struct FuncQcfgResponse {
    HwrmResponseHeader header;
    Le16 fid;
    Le16 port_id;
    Le16 vlan;
    Le16 flags;                               // bit 6 TRUSTED_VF, bit 7 SECURE_MODE_ENABLED, bit 14 ENABLE_RDMA_SRIOV
    std::array<std::uint8_t, 6> mac_address;  // current MAC
    Le16 pci_id;
    std::array<std::uint8_t, 2> reserved_24;
    Le16 alloc_cmpl_rings;
    std::array<std::uint8_t, 8> reserved_28;
    Le16 admin_mtu;
    Le16 mru;
    std::array<std::uint8_t, 32> reserved_40;
    Le16 alloc_msix;  // MSI-X vectors reserved for the function
    std::array<std::uint8_t, 2> reserved_74;
    Le16 l2_doorbell_bar_size_kb;  // informational on P5
    std::array<std::uint8_t, 6> reserved_78;
    Le16 legacy_l2_db_size_kb;  // [P7] doorbell offset; ignored on P5
    std::array<std::uint8_t, 3> reserved_86;
    std::uint8_t db_page_size;  // 0 = 4 KiB
    std::array<std::uint8_t, 85> reserved_90;
    std::uint8_t valid;
};
static_assert(sizeof(FuncQcfgResponse) == 176);
static_assert(offsetof(FuncQcfgResponse, fid) == 8 && offsetof(FuncQcfgResponse, port_id) == 10);
static_assert(offsetof(FuncQcfgResponse, vlan) == 12 && offsetof(FuncQcfgResponse, flags) == 14);
static_assert(offsetof(FuncQcfgResponse, mac_address) == 16 && offsetof(FuncQcfgResponse, pci_id) == 22);
static_assert(offsetof(FuncQcfgResponse, alloc_cmpl_rings) == 26 && offsetof(FuncQcfgResponse, admin_mtu) == 36);
static_assert(offsetof(FuncQcfgResponse, mru) == 38 && offsetof(FuncQcfgResponse, alloc_msix) == 72);
static_assert(offsetof(FuncQcfgResponse, l2_doorbell_bar_size_kb) == 76);
static_assert(offsetof(FuncQcfgResponse, legacy_l2_db_size_kb) == 84);
static_assert(offsetof(FuncQcfgResponse, db_page_size) == 89 && offsetof(FuncQcfgResponse, valid) == 175);
static_assert(std::has_unique_object_representations_v<FuncQcfgResponse>);

// §3.10 HWRM_FUNC_DRV_RGTR, 112 bytes.
struct DrvRgtrRequest {
    HwrmRequestHeader header;
    Le32 flags;    // drv_rgtr::FLAGS_16BIT_VER_MODE, ...; minimal driver 0x4
    Le32 enables;  // drv_rgtr::ENABLES_OS_TYPE, ...
    Le16 os_type;  // drv_rgtr::os_type_*
    std::uint8_t ver_maj_8b;
    std::uint8_t ver_min_8b;
    std::uint8_t ver_upd_8b;
    std::array<std::uint8_t, 3> reserved_29;
    Le32 timestamp;
    std::array<std::uint8_t, 4> reserved_36;
    std::array<Le32, 8> vf_req_fwd;       // bitmap; 0
    std::array<Le32, 8> async_event_fwd;  // bitmap; 0 for a polling driver
    Le16 ver_maj;
    Le16 ver_min;
    Le16 ver_upd;
    Le16 ver_patch;
};
static_assert(sizeof(DrvRgtrRequest) == 112);
static_assert(offsetof(DrvRgtrRequest, flags) == 16 && offsetof(DrvRgtrRequest, enables) == 20);
static_assert(offsetof(DrvRgtrRequest, os_type) == 24 && offsetof(DrvRgtrRequest, ver_maj_8b) == 26);
static_assert(offsetof(DrvRgtrRequest, ver_min_8b) == 27 && offsetof(DrvRgtrRequest, ver_upd_8b) == 28);
static_assert(offsetof(DrvRgtrRequest, timestamp) == 32 && offsetof(DrvRgtrRequest, vf_req_fwd) == 40);
static_assert(offsetof(DrvRgtrRequest, async_event_fwd) == 72 && offsetof(DrvRgtrRequest, ver_maj) == 104);
static_assert(offsetof(DrvRgtrRequest, ver_min) == 106 && offsetof(DrvRgtrRequest, ver_upd) == 108);
static_assert(offsetof(DrvRgtrRequest, ver_patch) == 110);
static_assert(std::has_unique_object_representations_v<DrvRgtrRequest>);

struct DrvRgtrResponse {
    HwrmResponseHeader header;
    Le32 flags;  // bit 0 IF_CHANGE_SUPPORTED
    std::array<std::uint8_t, 3> reserved_12;
    std::uint8_t valid;
};
static_assert(sizeof(DrvRgtrResponse) == 16);
static_assert(offsetof(DrvRgtrResponse, flags) == 8 && offsetof(DrvRgtrResponse, valid) == 15);
static_assert(std::has_unique_object_representations_v<DrvRgtrResponse>);

namespace drv_rgtr {
inline constexpr Field<2, 1> FLAGS_16BIT_VER_MODE;  // use ver_* at 104..111
inline constexpr Field<4, 1> FLAGS_HOT_RESET_SUPPORT;
inline constexpr Field<5, 1> FLAGS_ERROR_RECOVERY_SUPPORT;
inline constexpr Field<10, 1> FLAGS_ASYM_QUEUE_CFG_SUPPORT;
inline constexpr Field<0, 1> ENABLES_OS_TYPE;
inline constexpr Field<1, 1> ENABLES_VER;
inline constexpr Field<2, 1> ENABLES_TIMESTAMP;
inline constexpr Field<3, 1> ENABLES_VF_REQ_FWD;
inline constexpr Field<4, 1> ENABLES_ASYNC_EVENT_FWD;
inline constexpr std::uint16_t os_type_unknown = 0x0;
inline constexpr std::uint16_t os_type_other = 0x1;
inline constexpr std::uint16_t os_type_linux = 0x24;
}  // namespace drv_rgtr

// §3.10 HWRM_FUNC_DRV_UNRGTR; response: HwrmErrorResponse.
struct DrvUnrgtrRequest {
    HwrmRequestHeader header;
    Le32 flags;  // bit 0 PREPARE_FOR_SHUTDOWN
    std::array<std::uint8_t, 4> reserved_20;
};
static_assert(sizeof(DrvUnrgtrRequest) == 24);
static_assert(offsetof(DrvUnrgtrRequest, flags) == 16);
static_assert(std::has_unique_object_representations_v<DrvUnrgtrRequest>);

// §3.11 HWRM_FUNC_BACKING_STORE_QCAPS: request is the header alone; response 104 bytes.
struct BackingStoreQcapsResponse {
    HwrmResponseHeader header;
    Le32 qp_max_entries;
    Le16 qp_min_qp1_entries;
    Le16 qp_max_l2_entries;
    Le16 qp_entry_size;
    Le16 srq_max_l2_entries;
    Le32 srq_max_entries;
    Le16 srq_entry_size;
    Le16 cq_max_l2_entries;
    Le32 cq_max_entries;
    Le16 cq_entry_size;
    Le16 vnic_max_vnic_entries;
    Le16 vnic_max_ring_table_entries;
    Le16 vnic_entry_size;
    Le32 stat_max_entries;
    Le16 stat_entry_size;
    Le16 tqm_entry_size;
    Le32 tqm_min_entries_per_ring;
    Le32 tqm_max_entries_per_ring;
    Le32 mrav_max_entries;
    Le16 mrav_entry_size;
    Le16 tim_entry_size;
    Le32 tim_max_entries;
    Le16 mrav_num_entries_units;
    std::uint8_t tqm_entries_multiple;
    std::uint8_t ctx_kind_initializer;  // byte to pre-fill context pages with
    Le16 ctx_init_mask;                 // bit 0 QP, 1 SRQ, 2 CQ, 3 VNIC, 4 STAT, 5 MRAV
    std::uint8_t qp_init_offset;
    std::uint8_t srq_init_offset;
    std::uint8_t cq_init_offset;
    std::uint8_t vnic_init_offset;
    std::uint8_t tqm_fp_rings_count;
    std::uint8_t stat_init_offset;
    std::uint8_t mrav_init_offset;
    std::uint8_t tqm_fp_rings_count_ext;
    std::array<std::uint8_t, 21> reserved_82;
    std::uint8_t valid;
};
static_assert(sizeof(BackingStoreQcapsResponse) == 104);
static_assert(offsetof(BackingStoreQcapsResponse, qp_max_entries) == 8);
static_assert(offsetof(BackingStoreQcapsResponse, qp_min_qp1_entries) == 12);
static_assert(offsetof(BackingStoreQcapsResponse, qp_max_l2_entries) == 14);
static_assert(offsetof(BackingStoreQcapsResponse, qp_entry_size) == 16);
static_assert(offsetof(BackingStoreQcapsResponse, srq_max_l2_entries) == 18);
static_assert(offsetof(BackingStoreQcapsResponse, srq_max_entries) == 20);
static_assert(offsetof(BackingStoreQcapsResponse, srq_entry_size) == 24);
static_assert(offsetof(BackingStoreQcapsResponse, cq_max_l2_entries) == 26);
static_assert(offsetof(BackingStoreQcapsResponse, cq_max_entries) == 28);
static_assert(offsetof(BackingStoreQcapsResponse, cq_entry_size) == 32);
static_assert(offsetof(BackingStoreQcapsResponse, vnic_max_vnic_entries) == 34);
static_assert(offsetof(BackingStoreQcapsResponse, vnic_max_ring_table_entries) == 36);
static_assert(offsetof(BackingStoreQcapsResponse, vnic_entry_size) == 38);
static_assert(offsetof(BackingStoreQcapsResponse, stat_max_entries) == 40);
static_assert(offsetof(BackingStoreQcapsResponse, stat_entry_size) == 44);
static_assert(offsetof(BackingStoreQcapsResponse, tqm_entry_size) == 46);
static_assert(offsetof(BackingStoreQcapsResponse, tqm_min_entries_per_ring) == 48);
static_assert(offsetof(BackingStoreQcapsResponse, tqm_max_entries_per_ring) == 52);
static_assert(offsetof(BackingStoreQcapsResponse, mrav_max_entries) == 56);
static_assert(offsetof(BackingStoreQcapsResponse, mrav_entry_size) == 60);
static_assert(offsetof(BackingStoreQcapsResponse, tim_entry_size) == 62);
static_assert(offsetof(BackingStoreQcapsResponse, tim_max_entries) == 64);
static_assert(offsetof(BackingStoreQcapsResponse, mrav_num_entries_units) == 68);
static_assert(offsetof(BackingStoreQcapsResponse, tqm_entries_multiple) == 70);
static_assert(offsetof(BackingStoreQcapsResponse, ctx_kind_initializer) == 71);
static_assert(offsetof(BackingStoreQcapsResponse, ctx_init_mask) == 72);
static_assert(offsetof(BackingStoreQcapsResponse, qp_init_offset) == 74);
static_assert(offsetof(BackingStoreQcapsResponse, srq_init_offset) == 75);
static_assert(offsetof(BackingStoreQcapsResponse, cq_init_offset) == 76);
static_assert(offsetof(BackingStoreQcapsResponse, vnic_init_offset) == 77);
static_assert(offsetof(BackingStoreQcapsResponse, tqm_fp_rings_count) == 78);
static_assert(offsetof(BackingStoreQcapsResponse, stat_init_offset) == 79);
static_assert(offsetof(BackingStoreQcapsResponse, mrav_init_offset) == 80);
static_assert(offsetof(BackingStoreQcapsResponse, tqm_fp_rings_count_ext) == 81);
static_assert(offsetof(BackingStoreQcapsResponse, valid) == 103);
static_assert(std::has_unique_object_representations_v<BackingStoreQcapsResponse>);

// §3.11: the order of the 16 per-kind bytes and page directories of BACKING_STORE_CFG.
enum class BackingStoreKind : std::uint8_t {
    QPC = 0,
    SRQ,
    CQ,
    VNIC,
    STAT,
    TQM_SP,
    TQM_RING0,
    TQM_RING1,
    TQM_RING2,
    TQM_RING3,
    TQM_RING4,
    TQM_RING5,
    TQM_RING6,
    TQM_RING7,
    MRAV,
    TIM,
};
inline constexpr std::size_t backing_store_kinds = 16;

// §3.11 HWRM_FUNC_BACKING_STORE_CFG, 336 bytes in HSI 1.10.3 (older firmware accepts a
// shorter prefix). Longer than the 128-byte window: short mode where supported.
struct BackingStoreCfgRequest {
    HwrmRequestHeader header;
    Le32 flags;    // bit 1 MRAV_RESERVATION_SPLIT
    Le32 enables;  // bit 0 QP, 1 SRQ, 2 CQ, 3 VNIC, 4 STAT, 5 TQM_SP, 6..13 TQM_RING0..7, 14 MRAV, 15 TIM
    // <kind>_pg_size_<kind>_lvl in BackingStoreKind order: backing_store::lvl, backing_store::pg_size.
    std::array<std::uint8_t, backing_store_kinds> pg_size_lvl;
    std::array<Le64, backing_store_kinds> page_dir;  // level 0: the data page; else the PTE/PDE page
    Le32 qp_num_entries;
    Le32 srq_num_entries;
    Le32 cq_num_entries;
    Le32 stat_num_entries;
    Le32 tqm_sp_num_entries;
    std::array<Le32, 8> tqm_ring_num_entries;  // tqm_ring0..7_num_entries
    Le32 mrav_num_entries;
    Le32 tim_num_entries;
    Le16 qp_num_qp1_entries;
    Le16 qp_num_l2_entries;
    Le16 qp_entry_size;
    Le16 srq_num_l2_entries;
    Le16 srq_entry_size;
    Le16 cq_num_l2_entries;
    Le16 cq_entry_size;
    Le16 vnic_num_vnic_entries;
    Le16 vnic_num_ring_table_entries;
    Le16 vnic_entry_size;
    Le16 stat_entry_size;
    Le16 tqm_entry_size;
    Le16 mrav_entry_size;
    Le16 tim_entry_size;
    std::array<std::uint8_t, 80> reserved_256;  // TQM rings 8..10, kTLS/QUIC: zero
};
static_assert(sizeof(BackingStoreCfgRequest) == 336);
static_assert(offsetof(BackingStoreCfgRequest, flags) == 16 && offsetof(BackingStoreCfgRequest, enables) == 20);
static_assert(offsetof(BackingStoreCfgRequest, pg_size_lvl) == 24 && offsetof(BackingStoreCfgRequest, page_dir) == 40);
static_assert(offsetof(BackingStoreCfgRequest, qp_num_entries) == 168);
static_assert(offsetof(BackingStoreCfgRequest, srq_num_entries) == 172);
static_assert(offsetof(BackingStoreCfgRequest, cq_num_entries) == 176);
static_assert(offsetof(BackingStoreCfgRequest, stat_num_entries) == 180);
static_assert(offsetof(BackingStoreCfgRequest, tqm_sp_num_entries) == 184);
static_assert(offsetof(BackingStoreCfgRequest, tqm_ring_num_entries) == 188);
static_assert(offsetof(BackingStoreCfgRequest, mrav_num_entries) == 220);
static_assert(offsetof(BackingStoreCfgRequest, tim_num_entries) == 224);
static_assert(offsetof(BackingStoreCfgRequest, qp_num_qp1_entries) == 228);
static_assert(offsetof(BackingStoreCfgRequest, qp_num_l2_entries) == 230);
static_assert(offsetof(BackingStoreCfgRequest, qp_entry_size) == 232);
static_assert(offsetof(BackingStoreCfgRequest, srq_num_l2_entries) == 234);
static_assert(offsetof(BackingStoreCfgRequest, srq_entry_size) == 236);
static_assert(offsetof(BackingStoreCfgRequest, cq_num_l2_entries) == 238);
static_assert(offsetof(BackingStoreCfgRequest, cq_entry_size) == 240);
static_assert(offsetof(BackingStoreCfgRequest, vnic_num_vnic_entries) == 242);
static_assert(offsetof(BackingStoreCfgRequest, vnic_num_ring_table_entries) == 244);
static_assert(offsetof(BackingStoreCfgRequest, vnic_entry_size) == 246);
static_assert(offsetof(BackingStoreCfgRequest, stat_entry_size) == 248);
static_assert(offsetof(BackingStoreCfgRequest, tqm_entry_size) == 250);
static_assert(offsetof(BackingStoreCfgRequest, mrav_entry_size) == 252);
static_assert(offsetof(BackingStoreCfgRequest, tim_entry_size) == 254);
static_assert(std::has_unique_object_representations_v<BackingStoreCfgRequest>);

namespace backing_store {
inline constexpr Field<1, 1> FLAGS_MRAV_RESERVATION_SPLIT;
// Linux's BNXT_BACKING_STORE_CFG_LEGACY_LEN (bnxt.h): the request's first 256 bytes (up to
// tim_entry_size), sent where the firmware's max_ext_req_len is below the full request
// (bnxt_hwrm_func_backing_store_cfg).
inline constexpr std::size_t legacy_request_bytes = 256;
// With MRAV_RESERVATION_SPLIT, mrav_num_entries holds num_mr / units in bits 31:16 and
// num_ah / units in bits 15:0 (units = QCAPS mrav_num_entries_units).
inline constexpr Field<16, 16> mrav_num_mr;
inline constexpr Field<0, 16> mrav_num_ah;
inline constexpr Field<0, 4> lvl;      // low nibble of pg_size_lvl[kind]: 0/1/2
inline constexpr Field<4, 4> pg_size;  // high nibble: PgSize (§2.3)
}  // namespace backing_store

// HWRM_QUEUE_QPORTCFG (bnxt_hsi.h hwrm_queue_qportcfg_input / _output): the port's CoS
// queues. The driver reads max_configurable_queues, which Linux (bnxt_hwrm_queue_qportcfg,
// bp->max_q) takes as the count of fast-path TQM rings where BACKING_STORE_QCAPS gives no
// tqm_fp_rings_count. Request 24 bytes; the response's first 32 bytes (queue ids 0..7 and
// their service profiles), which every HSI version from 1.8 on begins with.
struct QueueQportcfgRequest {
    HwrmRequestHeader header;
    Le32 flags;  // bit 0 PATH: 0 TX, 1 RX
    Le16 port_id;
    std::uint8_t drv_qmap_cap;
    std::uint8_t unused_0;
};
static_assert(sizeof(QueueQportcfgRequest) == 24);
static_assert(offsetof(QueueQportcfgRequest, flags) == 16 && offsetof(QueueQportcfgRequest, port_id) == 20);
static_assert(offsetof(QueueQportcfgRequest, drv_qmap_cap) == 22);
static_assert(std::has_unique_object_representations_v<QueueQportcfgRequest>);

struct QueueQportcfgResponse {
    HwrmResponseHeader header;
    std::uint8_t max_configurable_queues;
    std::uint8_t max_configurable_lossless_queues;
    std::uint8_t queue_cfg_allowed;
    std::uint8_t queue_cfg_info;
    std::uint8_t queue_pfcenable;
    std::uint8_t queue_pri2cos_cfg_allowed;
    std::uint8_t queue_cos2bw_cfg_allowed;
    // queue_id0, queue_id0_service_profile, ... queue_id7, queue_id7_service_profile.
    std::array<std::uint8_t, 16> queue_id_service_profile;
    std::uint8_t valid;
};
static_assert(sizeof(QueueQportcfgResponse) == 32);
static_assert(offsetof(QueueQportcfgResponse, max_configurable_queues) == 8);
static_assert(offsetof(QueueQportcfgResponse, max_configurable_lossless_queues) == 9);
static_assert(offsetof(QueueQportcfgResponse, queue_cos2bw_cfg_allowed) == 14);
static_assert(offsetof(QueueQportcfgResponse, queue_id_service_profile) == 15);
static_assert(offsetof(QueueQportcfgResponse, valid) == 31);
static_assert(std::has_unique_object_representations_v<QueueQportcfgResponse>);

namespace queue_qportcfg {
inline constexpr std::uint8_t max_queues = 8;  // Linux's BNXT_MAX_QUEUE
}  // namespace queue_qportcfg

// §3.12 HWRM_RING_ALLOC, 96 bytes in HSI 1.10.3 (80 in older layouts).
struct RingAllocRequest {
    HwrmRequestHeader header;
    Le32 enables;            // 0 for a RoCE NQ / CREQ
    std::uint8_t ring_type;  // RingType: NQ for the CREQ and every RoCE NQ on P5
    std::uint8_t cmpl_coal_cnt;
    Le16 flags;
    Le64 page_tbl_addr;           // the data page of a one-page ring, else the PTE page
    Le32 fbo;                     // first-byte offset: 0
    std::uint8_t page_size;       // log2 (12) with page_tbl_depth 1; any value accepted ([CORRECTED])
    std::uint8_t page_tbl_depth;  // 0: one page, 1: one PTE page (2..512 pages)
    std::array<std::uint8_t, 2> reserved_38;
    Le32 length;        // 16-byte entries in the ring, a power of two
    Le16 logical_id;    // MSI-X vector the NQ signals
    Le16 cmpl_ring_id;  // not used for an NQ
    Le16 queue_id;      // not used
    std::array<std::uint8_t, 14> reserved_50;
    Le32 stat_ctx_id;  // not used
    std::array<std::uint8_t, 8> reserved_68;
    std::uint8_t int_mode;  // IntMode
    std::array<std::uint8_t, 3> reserved_77;
    Le64 cq_handle;  // not used for an NQ
    Le16 dpi;        // not used
    std::array<std::uint8_t, 6> reserved_90;
};
static_assert(sizeof(RingAllocRequest) == 96);
static_assert(offsetof(RingAllocRequest, enables) == 16 && offsetof(RingAllocRequest, ring_type) == 20);
static_assert(offsetof(RingAllocRequest, cmpl_coal_cnt) == 21 && offsetof(RingAllocRequest, flags) == 22);
static_assert(offsetof(RingAllocRequest, page_tbl_addr) == 24 && offsetof(RingAllocRequest, fbo) == 32);
static_assert(offsetof(RingAllocRequest, page_size) == 36 && offsetof(RingAllocRequest, page_tbl_depth) == 37);
static_assert(offsetof(RingAllocRequest, length) == 40 && offsetof(RingAllocRequest, logical_id) == 44);
static_assert(offsetof(RingAllocRequest, cmpl_ring_id) == 46 && offsetof(RingAllocRequest, queue_id) == 48);
static_assert(offsetof(RingAllocRequest, stat_ctx_id) == 64 && offsetof(RingAllocRequest, int_mode) == 76);
static_assert(offsetof(RingAllocRequest, cq_handle) == 80 && offsetof(RingAllocRequest, dpi) == 88);
static_assert(std::has_unique_object_representations_v<RingAllocRequest>);
inline constexpr std::size_t ring_alloc_min_bytes = 80;  // the oldest layout (§3.12)

enum class RingType : std::uint8_t { L2_CMPL = 0, TX = 1, RX = 2, ROCE_CMPL = 3, RX_AGG = 4, NQ = 5 };
enum class IntMode : std::uint8_t { LEGACY = 0, MSIX = 2, POLL = 3 };

struct RingAllocResponse {
    HwrmResponseHeader header;
    Le16 ring_id;  // the NQ's doorbell xid, cmdq_init.creq_ring_id, CREATE_CQ cnq_id
    Le16 logical_ring_id;
    std::uint8_t push_buffer_index;
    std::array<std::uint8_t, 2> reserved_13;
    std::uint8_t valid;
};
static_assert(sizeof(RingAllocResponse) == 16);
static_assert(offsetof(RingAllocResponse, ring_id) == 8 && offsetof(RingAllocResponse, logical_ring_id) == 10);
static_assert(offsetof(RingAllocResponse, push_buffer_index) == 12 && offsetof(RingAllocResponse, valid) == 15);
static_assert(std::has_unique_object_representations_v<RingAllocResponse>);
inline constexpr std::uint16_t ring_id_invalid = 0xFFFF;  // Linux's "no ring"

// §3.12 HWRM_RING_FREE; response: HwrmErrorResponse.
struct RingFreeRequest {
    HwrmRequestHeader header;
    std::uint8_t ring_type;  // RingType::NQ
    std::uint8_t flags;      // 0
    Le16 ring_id;
    Le32 prod_idx;  // 0
    Le32 opaque;
    std::array<std::uint8_t, 4> reserved_28;
};
static_assert(sizeof(RingFreeRequest) == 32);
static_assert(offsetof(RingFreeRequest, ring_type) == 16 && offsetof(RingFreeRequest, flags) == 17);
static_assert(offsetof(RingFreeRequest, ring_id) == 18 && offsetof(RingFreeRequest, prod_idx) == 20);
static_assert(offsetof(RingFreeRequest, opaque) == 24);
static_assert(std::has_unique_object_representations_v<RingFreeRequest>);

// §3.13 HWRM_STAT_CTX_ALLOC, 48 bytes.
struct StatCtxAllocRequest {
    HwrmRequestHeader header;
    Le64 stats_dma_addr;
    Le32 update_period_ms;        // Linux: 1000
    std::uint8_t stat_ctx_flags;  // bit 0 ROCE
    std::uint8_t reserved_29;
    Le16 stats_dma_length;  // Linux: 160
    Le16 flags;
    Le16 steering_tag;
    Le32 stat_ctx_id;
    Le16 alloc_seq_id;
    std::array<std::uint8_t, 6> reserved_42;
};
static_assert(sizeof(StatCtxAllocRequest) == 48);
static_assert(offsetof(StatCtxAllocRequest, stats_dma_addr) == 16);
static_assert(offsetof(StatCtxAllocRequest, update_period_ms) == 24);
static_assert(offsetof(StatCtxAllocRequest, stat_ctx_flags) == 28);
static_assert(offsetof(StatCtxAllocRequest, stats_dma_length) == 30 && offsetof(StatCtxAllocRequest, flags) == 32);
static_assert(offsetof(StatCtxAllocRequest, steering_tag) == 34 && offsetof(StatCtxAllocRequest, stat_ctx_id) == 36);
static_assert(offsetof(StatCtxAllocRequest, alloc_seq_id) == 40);
static_assert(std::has_unique_object_representations_v<StatCtxAllocRequest>);
namespace stat_ctx {
inline constexpr Field<0, 1> ROCE;  // stat_ctx_flags
}

struct StatCtxAllocResponse {
    HwrmResponseHeader header;
    Le32 stat_ctx_id;  // INITIALIZE_FW.stat_ctx_id
    std::array<std::uint8_t, 3> reserved_12;
    std::uint8_t valid;
};
static_assert(sizeof(StatCtxAllocResponse) == 16);
static_assert(offsetof(StatCtxAllocResponse, stat_ctx_id) == 8 && offsetof(StatCtxAllocResponse, valid) == 15);
static_assert(std::has_unique_object_representations_v<StatCtxAllocResponse>);

// §3.13 HWRM_STAT_CTX_FREE; response: HwrmErrorResponse.
struct StatCtxFreeRequest {
    HwrmRequestHeader header;
    Le32 stat_ctx_id;
    std::array<std::uint8_t, 4> reserved_20;
};
static_assert(sizeof(StatCtxFreeRequest) == 24);
static_assert(offsetof(StatCtxFreeRequest, stat_ctx_id) == 16);
static_assert(std::has_unique_object_representations_v<StatCtxFreeRequest>);

}  // namespace rig::bnxt::hsi

// rig/bnxt/hsi/regs.hpp: the PCI identity of a BCM57508 and the registers its BARs
// decode, as docs/hsi.md §1 gives them. Offsets are byte offsets into a BAR, to be
// used with rig::pci::Window at the width each constant names; nothing here touches a BAR.
#pragma once

#include <cstdint>

namespace rig::bnxt::hsi {

// §1.1: PCI IDs. The driver decides "P5" from HWRM_VER_GET.chip_num, not from these.
inline constexpr std::uint16_t pci_vendor_broadcom = 0x14E4;
inline constexpr std::uint16_t pci_device_bcm57508 = 0x1750;  // PF, P5
inline constexpr std::uint16_t pci_device_bcm57504 = 0x1751;  // PF, P5
inline constexpr std::uint16_t pci_device_bcm57502 = 0x1752;  // PF, P5
inline constexpr std::uint32_t pci_class_ethernet = 0x020000;

// §1.2: the BARs (each 64-bit, memory; index = Linux resource number = BAR number).
inline constexpr unsigned bar_registers = 0;  // HWRM window, CMDQ mailbox, firmware status
inline constexpr unsigned bar_doorbells = 2;  // every doorbell (§5.8)
inline constexpr unsigned bar_other = 4;      // unused here; believed to hold the MSI-X table [UNCERTAIN]

// §1.3: BAR0 offsets. Every register is a u32 accessed with 32-bit loads and stores.
namespace bar0 {
inline constexpr std::uint64_t hwrm_window = 0x000;        // request bytes, 32-bit stores (§3.1)
inline constexpr std::uint64_t hwrm_window_bytes = 0x100;  // 0x000..0x0FF
inline constexpr std::uint64_t hwrm_trigger = 0x100;       // write 1 to submit the window
inline constexpr std::uint64_t grc_window_base = 0x400;    // not needed for the minimal path
inline constexpr std::uint64_t fw_status = 0x520;          // P5 fallback location [UNCERTAIN]
inline constexpr std::uint64_t cmdq_mailbox = 0x600;       // cmdq_init, four u32 (§4.2)
inline constexpr std::uint64_t cmdq_mailbox_bytes = 0x10;  // 0x600..0x60F
inline constexpr std::uint64_t cmdq_prod = 0x60C;          // CMDQ producer register (§4.3)
inline constexpr std::uint64_t cmdq_trigger = 0x700;       // write 1 after updating cmdq_prod
inline constexpr std::uint64_t kong_window = 0xA00;        // secondary channel, not used
inline constexpr std::uint64_t kong_trigger = 0xB00;
inline constexpr unsigned register_bytes = 4;  // the width of every register above
}  // namespace bar0

// §1.3: the low 16 bits of fw_status: 0x8000 healthy, below booting, above an error.
namespace fw_status {
inline constexpr std::uint32_t healthy = 0x8000;
inline constexpr std::uint32_t code_mask = 0xFFFF;
}  // namespace fw_status

// §1.4, §5.8.3: the privileged doorbell page in BAR2 (P5: a constant, firmware's value is
// ignored). Further 4 KiB pages above it are DPIs (§5.8.4, [UNCERTAIN] numbering).
namespace bar2 {
inline constexpr std::uint64_t doorbell_page_pf = 0x10000;
inline constexpr std::uint64_t doorbell_page_vf = 0x4000;
inline constexpr std::uint64_t doorbell_page_bytes = 0x1000;
inline constexpr unsigned doorbell_bytes = 8;  // one 64-bit store (§5.8.1)
}  // namespace bar2

}  // namespace rig::bnxt::hsi

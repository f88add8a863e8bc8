// rig/pci/names.hpp: what a function is, in words for people: its class code's name and
// the kind rig's tools group functions by (GPU, NIC, NVMe, ...).
//
// Class codes: PCI Code and ID Assignment Specification 1.15, §1 (base class, subclass,
// programming interface). A GPU is told by its vendor and class together, since
// data-center parts are 3D controllers (0x0302), processing accelerators (0x1200) or
// "other display" (0x0380) while workstation parts are VGA (0x0300) (docs/bugs.md B07).
#pragma once

#include <cstdint>
#include <string_view>

#include "rig/pci/machine.hpp"

namespace rig::pci {

// The name of a 24-bit class code's subclass ("VGA compatible controller", "Ethernet
// controller", "PCI bridge"), or of its base class where the subclass is not known to
// rig ("Display controller"); "Unassigned class" for base classes the spec does not name.
std::string_view class_name(std::uint32_t class_code);

// What a function is to rig's tools.
enum class Kind { Gpu, Nic, Nvme, Storage, Accelerator, Bridge, Other };

// A GPU: a vendor that makes them (NVIDIA 0x10de, AMD 0x1002, Intel 0x8086, Hygon 0x1d94)
// with class 0x0300 (VGA), 0x0302 (3D), 0x0380 (other display) or 0x1200 (processing
// accelerator). A NIC: base class 0x02, or 0x0c06 (InfiniBand, as older HCAs enumerate).
// NVMe: 0x010802. Storage: other base class 0x01.
// Accelerator: base class 0x12 or 0x0b40 (co-processor) of other vendors. Bridge: base
// class 0x06 (host, PCI-to-PCI, ISA, ...).
Kind kind_of(const Id& id);
bool is_gpu(const Id& id);

// "GPU", "NIC", "NVMe", "storage", "accelerator", "bridge", "other".
std::string_view to_string(Kind kind);

}  // namespace rig::pci

// Names of class codes and kinds of functions (rig/pci/names.hpp). The table holds the
// subclasses rig's users meet on GPU and NIC machines (PCI Code and ID Assignment 1.15 §1).
#include "rig/pci/names.hpp"

#include <algorithm>
#include <array>

namespace rig::pci {
namespace {

struct ClassName {
    std::uint16_t code;  // base class << 8 | subclass, or base class alone with `base`
    bool base;
    std::string_view name;
};

constexpr std::array<ClassName, 50> class_names{{
    {0x0000, false, "Non-VGA unclassified device"},
    {0x0001, false, "VGA compatible unclassified device"},
    {0x0100, false, "SCSI storage controller"},
    {0x0101, false, "IDE interface"},
    {0x0104, false, "RAID bus controller"},
    {0x0106, false, "SATA controller"},
    {0x0107, false, "Serial Attached SCSI controller"},
    {0x0108, false, "Non-Volatile memory controller"},
    {0x0180, false, "Mass storage controller"},
    {0x0200, false, "Ethernet controller"},
    {0x0207, false, "InfiniBand controller"},
    {0x0208, false, "Fabric controller"},
    {0x0280, false, "Network controller"},
    {0x0300, false, "VGA compatible controller"},
    {0x0302, false, "3D controller"},
    {0x0380, false, "Display controller"},
    {0x0401, false, "Multimedia audio controller"},
    {0x0403, false, "Audio device"},
    {0x0500, false, "RAM memory"},
    {0x0502, false, "CXL memory device"},
    {0x0600, false, "Host bridge"},
    {0x0601, false, "ISA bridge"},
    {0x0604, false, "PCI bridge"},
    {0x0609, false, "Semi-transparent PCI-to-PCI bridge"},
    {0x0680, false, "Bridge"},
    {0x0700, false, "Serial controller"},
    {0x0780, false, "Communication controller"},
    {0x0800, false, "PIC"},
    {0x0805, false, "SD Host controller"},
    {0x0806, false, "IOMMU"},
    {0x0807, false, "Root Complex Event Collector"},
    {0x0880, false, "System peripheral"},
    {0x0b40, false, "Co-processor"},
    {0x0c03, false, "USB controller"},
    {0x0c05, false, "SMBus"},
    {0x0c06, false, "InfiniBand"},
    {0x1200, false, "Processing accelerators"},
    {0x1300, false, "Non-Essential Instrumentation"},
    {0x01, true, "Mass storage controller"},
    {0x02, true, "Network controller"},
    {0x03, true, "Display controller"},
    {0x04, true, "Multimedia controller"},
    {0x05, true, "Memory controller"},
    {0x06, true, "Bridge"},
    {0x07, true, "Communication controller"},
    {0x08, true, "Generic system peripheral"},
    {0x0c, true, "Serial bus controller"},
    {0x0d, true, "Wireless controller"},
    {0x12, true, "Processing accelerators"},
    {0xff, true, "Unassigned class"},
}};

constexpr std::array<std::uint16_t, 4> gpu_vendors{0x10de, 0x1002, 0x8086, 0x1d94};
constexpr std::array<std::uint16_t, 4> gpu_classes{0x0300, 0x0302, 0x0380, 0x1200};

}  // namespace

std::string_view class_name(std::uint32_t class_code) {
    const auto subclass = static_cast<std::uint16_t>(class_code >> 8);
    const auto base = static_cast<std::uint16_t>(class_code >> 16);
    for (const auto& entry : class_names)
        if (!entry.base && entry.code == subclass) return entry.name;
    for (const auto& entry : class_names)
        if (entry.base && entry.code == base) return entry.name;
    return "Unassigned class";
}

bool is_gpu(const Id& id) {
    const auto subclass = static_cast<std::uint16_t>(id.class_code >> 8);
    return std::find(gpu_vendors.begin(), gpu_vendors.end(), id.vendor) != gpu_vendors.end() &&
           std::find(gpu_classes.begin(), gpu_classes.end(), subclass) != gpu_classes.end();
}

Kind kind_of(const Id& id) {
    const auto base = id.class_code >> 16;
    const auto subclass = id.class_code >> 8;
    if (is_gpu(id)) return Kind::Gpu;
    if (base == 0x02 || subclass == 0x0c06) return Kind::Nic;  // network, or InfiniBand (serial bus) controller
    if (id.class_code == 0x010802) return Kind::Nvme;
    if (base == 0x01) return Kind::Storage;
    if (base == 0x12 || subclass == 0x0b40) return Kind::Accelerator;
    if (base == 0x06) return Kind::Bridge;
    return Kind::Other;
}

std::string_view to_string(Kind kind) {
    switch (kind) {
    case Kind::Gpu: return "GPU";
    case Kind::Nic: return "NIC";
    case Kind::Nvme: return "NVMe";
    case Kind::Storage: return "storage";
    case Kind::Accelerator: return "accelerator";
    case Kind::Bridge: return "bridge";
    case Kind::Other: return "other";
    }
    return "other";
}

}  // namespace rig::pci

// Machine::bar_at (rig/pci/machine.hpp): which function's BAR decodes a bus address, as
// the machine's files show it. Each function's sysfs `resource` file lists its BARs as
// the kernel assigned them (drivers/pci/pci-sysfs.c, resource_show: start, end, flags per
// line, BARs 0..5 first); on x86-64 the start is the bus address, the host bridge not
// translating. What a NIC is handed as a GPU's runs (Region::device) names no function:
// this is how the driver learns whose BAR they are, so that it can ask the route to it.
#include "machine_state.hpp"
#include "sysfs.hpp"
#include "vfio_sysfs.hpp"

namespace rig::pci {

Result<std::optional<BarOf>> Machine::bar_at(DmaAddress address) const {
    if (!state_->root) return std::optional<BarOf>();
    const auto& root = *state_->root;
    auto listed = sysfs::functions(root);
    if (!listed) return std::unexpected(std::move(listed).error());
    for (const Id& id : *listed) {
        auto dir = sysfs::function_dir(root, id.bus);
        if (!dir) continue;
        auto bars = vfio::read_bars(*dir);
        if (!bars) continue;  // being removed, or malformed: passed over as functions() does
        for (unsigned i = 0; i < bars->size(); ++i) {
            const auto& bar = (*bars)[i];
            if (bar && address >= bar->address && address.value - bar->address.value < bar->bytes)
                return std::optional(BarOf{id.bus, i, *bar});
        }
    }
    return std::optional<BarOf>();
}

}  // namespace rig::pci

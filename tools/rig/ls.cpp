// rig ls: one line (or JSON object) per function, in bus order.
#include <fmt/format.h>

#include "commands.hpp"
#include "rig/pci/json.hpp"
#include "rig/pci/names.hpp"
#include "rig/pci/snapshot.hpp"

namespace rig::tool {
namespace {

std::string or_dash(const std::optional<std::string>& s) { return s ? *s : "-"; }

}  // namespace

int ls(const pci::Machine& machine, bool json, std::ostream& out, std::ostream& err) {
    const auto functions = pci::describe(machine);
    if (!functions) {
        err << "rig: " << functions.error() << '\n';
        return 1;
    }
    if (json) {
        const auto text = pci::ls_json(machine);
        if (!text) {
            err << "rig: " << text.error() << '\n';
            return 1;
        }
        out << *text << '\n';
        return 0;
    }
    out << fmt::format("{:<14} {:<9} {:<8} {:<36} {:<14} {:>4} {:>5}  {:<24} {}\n", "BUS", "ID", "CLASS", "", "DRIVER",
                       "NUMA", "IOMMU", "LINK", "BUSES");
    for (const auto& f : *functions) {
        const auto kind = pci::kind_of(f.id);
        std::string name(pci::class_name(f.id.class_code));
        if (kind == pci::Kind::Gpu || kind == pci::Kind::Nic) name += fmt::format(" ({})", pci::to_string(kind));
        if (f.physfn) name += " (VF of " + *f.physfn + ")";
        const std::string buses = f.buses ? fmt::format("[{:02x}-{:02x}]", f.buses->first, f.buses->second) : "";
        const std::string link = f.link.source == pci::LinkSource::Unread ? "-" : pci::describe(f.link);
        out << fmt::format("{:<14} {:04x}:{:04x} {:06x}   {:<36} {:<14} {:>4} {:>5}  {:<24} {}\n", f.id.bus,
                           f.id.vendor, f.id.device, f.id.class_code, name, or_dash(f.driver),
                           f.numa_node ? std::to_string(*f.numa_node) : "-", or_dash(f.iommu_group), link, buses);
    }
    return 0;
}

}  // namespace rig::tool

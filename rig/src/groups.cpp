// IOMMU groups from sysfs (rig/pci/groups.hpp): the members of a group are the functions
// whose iommu_group link names it, as sys/kernel/iommu_groups/N/devices lists them.
#include "rig/pci/groups.hpp"

#include "rig/pci/snapshot.hpp"

namespace rig::pci {
namespace {

constexpr std::uint32_t bridge_class = 0x0604;  // class code >> 8: PCI-to-PCI bridge

}  // namespace

bool GroupMember::lets_vfio() const {
    // vfio-pci and pci-stub set driver_managed_dma (include/linux/device/driver.h), so
    // their binding claims no DMA; pcieport binds bridges, which VFIO passes over.
    return bridge || !driver || *driver == "vfio-pci" || *driver == "pci-stub";
}

std::vector<GroupMember> IommuGroup::blockers(std::string_view bus) const {
    std::vector<GroupMember> out;
    for (const GroupMember& m : members)
        if (m.bus != bus && !m.lets_vfio()) out.push_back(m);
    return out;
}

Result<std::optional<IommuGroup>> iommu_group(const Machine& machine, std::string_view bus) {
    if (!machine.root()) return std::optional<IommuGroup>();
    auto files = describe(machine);
    if (!files) return std::unexpected(std::move(files).error());
    std::optional<std::string> number;
    for (const FunctionFiles& f : *files)
        if (f.id.bus == bus) number = f.iommu_group;
    if (!number) return std::optional<IommuGroup>();
    IommuGroup group{*number, {}};
    for (const FunctionFiles& f : *files)
        if (f.iommu_group == number)
            group.members.push_back({f.id.bus, f.driver, (f.id.class_code >> 8) == bridge_class});
    return std::optional<IommuGroup>(std::move(group));
}

std::string not_viable(const IommuGroup& group, std::string_view bus) {
    const auto blockers = group.blockers(bus);
    if (blockers.empty()) return {};
    std::string text = "IOMMU group " + group.number + " is not viable: ";
    std::string remedy;
    for (std::size_t i = 0; i < blockers.size(); ++i) {
        const std::string sep = i == 0 ? "" : (i + 1 == blockers.size() ? " and " : ", ");
        text += sep + blockers[i].bus + " in it is bound to the driver " + *blockers[i].driver;
        remedy += sep + blockers[i].bus + " from " + *blockers[i].driver;
    }
    return text +
           "; VFIO takes a function only where every function of its group is bound to vfio-pci, to no driver, "
           "or is a bridge: unbind " +
           remedy + " (or bind " + (blockers.size() == 1 ? "it" : "them") + " to vfio-pci)";
}

std::string direct_behind_iommu(const Machine& machine, const Route& route, bool client_behind_iommu) {
    if (route.verdict != Verdict::Direct || !client_behind_iommu) return {};
    std::string text = "behind an IOMMU this direct route means no ACS isolates " + route.client + " from " +
                       route.provider + ", so they share an IOMMU group";
    std::optional<std::string> driver;
    if (auto group = iommu_group(machine, route.client); group && *group) {
        for (const GroupMember& m : (*group)->members)
            if (m.bus == route.provider) {
                text += " (" + (*group)->number + ")";
                driver = m.driver;
            }
    }
    if (!driver)
        if (auto files = describe(machine))
            for (const FunctionFiles& f : *files)
                if (f.id.bus == route.provider) driver = f.driver;
    text += ", and VFIO takes " + route.client + " only with " + route.provider +
            " free of its vendor driver (bound to vfio-pci or to none";
    if (driver) text += "; it is bound to " + *driver;
    return text + ")";
}

}  // namespace rig::pci

// The VFIO path's sysfs reads and the config-file lock (vfio_sysfs.hpp).
#include "vfio_sysfs.hpp"

#include <fcntl.h>

#include <cerrno>
#include <charconv>
#include <sstream>
#include <system_error>

#include "sysfs.hpp"

namespace rig::pci::vfio {
namespace {

// include/linux/ioport.h: the resource flags sysfs `resource` prints.
constexpr std::uint64_t ioresource_io = 0x100;
constexpr std::uint64_t ioresource_mem = 0x200;
constexpr std::uint64_t ioresource_prefetch = 0x2000;

std::optional<unsigned> number(std::string_view s) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return value;
}

}  // namespace

std::optional<std::string> bound_driver(const fs::path& dir) { return sysfs::link_name(dir / "driver"); }

Result<std::optional<unsigned>> iommu_group(const fs::path& dir, const std::string& bus) {
    auto name = sysfs::link_name(dir / "iommu_group");
    if (!name) return std::optional<unsigned>();
    auto group = number(*name);
    if (!group) return fail(bus, ": its iommu_group link names \"", *name, "\", not a group number");
    return group;
}

bool is_noiommu(const fs::path& root, unsigned group) {
    auto name = sysfs::read_text(root / "sys/kernel/iommu_groups" / std::to_string(group) / "name");
    return name && name->starts_with("vfio-noiommu");
}

std::optional<std::string> vfio_cdev(const fs::path& dir) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir / "vfio-dev", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with("vfio") && number(std::string_view(name).substr(4))) return name;
    }
    return std::nullopt;
}

Result<std::array<std::optional<Bar>, 6>> read_bars(const fs::path& dir) {
    auto text = sysfs::read_text(dir / "resource");
    if (!text) return std::unexpected(std::move(text).error());
    std::array<std::optional<Bar>, 6> bars{};
    std::istringstream lines(*text);
    std::string line;
    for (unsigned i = 0; i < bars.size() && std::getline(lines, line); ++i) {
        std::uint64_t start = 0, end = 0, flags = 0;
        std::istringstream fields(line);
        fields >> std::hex >> start >> end >> flags;
        if (!fields)
            return fail((dir / "resource").string(), ": line ", std::to_string(i + 1), " \"", line,
                        "\" is not three hexadecimal numbers");
        if (end <= start || (flags & ioresource_io) || !(flags & ioresource_mem)) continue;
        bars[i] = Bar{DmaAddress{start}, end - start + 1, (flags & ioresource_prefetch) != 0};
    }
    return bars;
}

Result<Fd> lock_config(Kernel& kernel, const fs::path& dir, const std::string& bus) {
    const std::string file = (dir / "config").string();
    auto fd = kernel.open(file, O_RDONLY);
    if (!fd) return fail(bus, ": cannot open ", file, " to lock it: ", errno_text(fd.error()));
    Fd owned(kernel, *fd);
    auto locked = kernel.lock(owned.get());
    if (!locked) {
        if (locked.error() == EWOULDBLOCK)
            return fail(bus, " is taken by another process (or another take in this one): ", file, " is locked");
        return fail(bus, ": cannot lock ", file, ": ", errno_text(locked.error()));
    }
    return owned;
}

}  // namespace rig::pci::vfio

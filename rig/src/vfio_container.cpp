// The VFIO container and group API (vfio_iommu.hpp; linux/vfio.h, "IOCTLs for VFIO file
// descriptor" and "IOCTLs for GROUP file descriptors"; Documentation/driver-api/vfio.rst).
//
// The order the kernel wants: open the container, check the API version; open the group
// and check it is viable (every function of it bound to vfio-pci or to no driver); set the
// group's container; then set the container's IOMMU type (type1v2, or the no-IOMMU mode
// for a noiommu group); then ask the group for the device fd by its bus address. Each
// function gets a container of its own, so its IOVAs are its alone.
#include <fcntl.h>
#include <linux/vfio.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "rig/text.hpp"
#include "rig/little_endian.hpp"
#include "vfio_info.hpp"
#include "vfio_iommu.hpp"

namespace rig::pci::vfio {
namespace {

// When the kernel gives no IOVA range capability (before Linux 5.4): below the x86 MSI
// window 0xfee00000-0xfeefffff and above it, up to 48 bits.
const std::vector<IovaRange> default_ranges{{0x10'0000, 0xfee0'0000}, {0xfef0'0000, std::uint64_t{1} << 48}};

std::uint64_t exclusive_end(std::uint64_t last) {
    return last == std::numeric_limits<std::uint64_t>::max() ? last : last + 1;
}

class Container final : public IoSpace {
public:
    Container(Kernel& kernel, std::string bus, Fd container, Fd group, bool noiommu)
        : kernel_(kernel),
          bus_(std::move(bus)),
          container_(std::move(container)),
          group_(std::move(group)),
          noiommu_(noiommu) {}
    ~Container() override {
        // The group leaves its container before either closes (vfio.rst).
        if (group_) (void)kernel_.ioctl(group_.get(), VFIO_GROUP_UNSET_CONTAINER, nullptr);
    }

    Addressing addressing() const override { return noiommu_ ? Addressing::Physical : Addressing::Iommu; }
    const std::vector<IovaRange>& ranges() const override { return ranges_; }

    Result<void> read_ranges() {
        if (noiommu_) return {};
        vfio_iommu_type1_info query{};
        query.argsz = sizeof query;
        auto info = get_info(kernel_, container_.get(), VFIO_IOMMU_GET_INFO, little_endian::bytes_of(query),
                             bus_ + ": VFIO_IOMMU_GET_INFO");
        if (!info) return std::unexpected(std::move(info).error());
        vfio_iommu_type1_info answer{};
        std::memcpy(&answer, info->data(), std::min(info->size(), sizeof answer));
        ranges_.clear();
        if ((answer.flags & VFIO_IOMMU_INFO_CAPS) && info->size() >= sizeof answer) {
            for (const Capability& cap : capabilities(*info, answer.cap_offset)) {
                if (cap.id != VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) continue;
                vfio_iommu_type1_info_cap_iova_range head{};
                if (cap.bytes.size() < sizeof head) continue;
                std::memcpy(&head, cap.bytes.data(), sizeof head);
                const std::size_t fit = (cap.bytes.size() - sizeof head) / sizeof(vfio_iova_range);
                for (std::size_t i = 0; i < std::min<std::size_t>(head.nr_iovas, fit); ++i) {
                    vfio_iova_range range{};
                    std::memcpy(&range, cap.bytes.data() + sizeof head + i * sizeof range, sizeof range);
                    if (range.end >= range.start) ranges_.push_back({range.start, exclusive_end(range.end)});
                }
            }
        }
        if (ranges_.empty()) ranges_ = default_ranges;
        return {};
    }

    Result<void> map(std::uint64_t iova, const std::byte* va, std::uint64_t bytes) override {
        vfio_iommu_type1_dma_map request{};
        request.argsz = sizeof request;
        request.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
        request.vaddr = reinterpret_cast<std::uintptr_t>(va);
        request.iova = iova;
        request.size = bytes;
        auto r = kernel_.ioctl(container_.get(), VFIO_IOMMU_MAP_DMA, &request);
        if (!r)
            return fail(bus_, ": VFIO_IOMMU_MAP_DMA of ", text::bytes(bytes), " at IOVA ", text::hex(iova),
                        " failed: ", errno_text(r.error()));
        return {};
    }

    Result<void> map_file(std::uint64_t iova, int, std::uint64_t bytes) override {
        return fail(bus_, ": the VFIO container maps no file (", text::bytes(bytes), " at IOVA ", text::hex(iova),
                    "): only process memory, VFIO_IOMMU_MAP_DMA");
    }
    bool maps_bar_mappings() const override { return !noiommu_; }

    Result<void> unmap(std::uint64_t iova, std::uint64_t bytes) override {
        vfio_iommu_type1_dma_unmap request{};
        request.argsz = sizeof request;
        request.iova = iova;
        request.size = bytes;
        auto r = kernel_.ioctl(container_.get(), VFIO_IOMMU_UNMAP_DMA, &request);
        if (!r)
            return fail(bus_, ": VFIO_IOMMU_UNMAP_DMA of ", text::bytes(bytes), " at IOVA ", text::hex(iova),
                        " failed: ", errno_text(r.error()));
        if (request.size != bytes)
            return fail(bus_, ": VFIO_IOMMU_UNMAP_DMA at IOVA ", text::hex(iova), " unmapped ",
                        text::bytes(request.size), " of ", text::bytes(bytes));
        return {};
    }

private:
    Kernel& kernel_;
    std::string bus_;
    Fd container_;
    Fd group_;
    bool noiommu_;
    std::vector<IovaRange> ranges_;
};

}  // namespace

Result<Opened> open_container(Kernel& kernel, const Paths& paths, const std::string& bus, unsigned group, bool noiommu,
                              const std::string& blocked) {
    const std::string container_path = paths.dev("/dev/vfio/vfio");
    auto container = kernel.open(container_path, O_RDWR);
    if (!container) {
        if (container.error() == ENOENT)
            return fail(bus, ": VFIO is not available: there is no ", container_path,
                        " (the kernel lacks CONFIG_VFIO, or the vfio module is not loaded)");
        return fail(bus, ": cannot open ", container_path, ": ", errno_text(container.error()));
    }
    Fd container_fd(kernel, *container);
    auto version = kernel.ioctl(container_fd.get(), VFIO_GET_API_VERSION, nullptr);
    if (!version || *version != VFIO_API_VERSION)
        return fail(bus, ": ", container_path, " speaks VFIO API version ", version ? std::to_string(*version) : "?",
                    ", not ", std::to_string(VFIO_API_VERSION));

    const std::string group_path =
        paths.dev("/dev/vfio/" + std::string(noiommu ? "noiommu-" : "") + std::to_string(group));
    auto group_open = kernel.open(group_path, O_RDWR);
    if (!group_open) {
        if (group_open.error() == EBUSY)
            return fail(bus, " is taken by another process: its IOMMU group ", std::to_string(group), " (", group_path,
                        ") is open");
        if (group_open.error() == ENOENT)
            return fail(bus, ": there is no ", group_path, ": bind the function to vfio-pci");
        return fail(bus, ": cannot open ", group_path, ": ", errno_text(group_open.error()));
    }
    Fd group_fd(kernel, *group_open);

    vfio_group_status status{};
    status.argsz = sizeof status;
    auto got = kernel.ioctl(group_fd.get(), VFIO_GROUP_GET_STATUS, &status);
    if (!got) return fail(bus, ": VFIO_GROUP_GET_STATUS of ", group_path, " failed: ", errno_text(got.error()));
    if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
        if (!blocked.empty()) return fail(bus, ": ", blocked, " (VFIO_GROUP_GET_STATUS: not viable)");
        return fail(bus, ": IOMMU group ", std::to_string(group),
                    " is not viable: every function of the group must be bound to vfio-pci or to no driver");
    }

    // Since Linux 5.19 setting the container claims the group's DMA
    // (iommu_group_claim_dma_owner()): EPERM while a driver of the group holds it.
    int container_number = container_fd.get();
    auto set = kernel.ioctl(group_fd.get(), VFIO_GROUP_SET_CONTAINER, &container_number);
    if (!set) {
        if (!blocked.empty() && (set.error() == EPERM || set.error() == EBUSY))
            return fail(bus, ": ", blocked, " (VFIO_GROUP_SET_CONTAINER: ", errno_text(set.error()), ")");
        return fail(bus, ": VFIO_GROUP_SET_CONTAINER failed: ", errno_text(set.error()));
    }

    const unsigned long type = noiommu ? VFIO_NOIOMMU_IOMMU : VFIO_TYPE1v2_IOMMU;
    const char* type_name = noiommu ? "the no-IOMMU mode" : "the type1v2 IOMMU";
    auto has = kernel.ioctl(container_fd.get(), VFIO_CHECK_EXTENSION, reinterpret_cast<void*>(type));
    if (!has || *has <= 0) return fail(bus, ": the VFIO container does not offer ", type_name);
    auto chosen = kernel.ioctl(container_fd.get(), VFIO_SET_IOMMU, reinterpret_cast<void*>(type));
    if (!chosen) return fail(bus, ": VFIO_SET_IOMMU to ", type_name, " failed: ", errno_text(chosen.error()));

    std::string name = bus;  // VFIO_GROUP_GET_DEVICE_FD takes the device's name, NUL-terminated
    auto device = kernel.ioctl(group_fd.get(), VFIO_GROUP_GET_DEVICE_FD, name.data());
    if (!device) {
        if (device.error() == EBUSY) return fail(bus, " is taken by another process: VFIO has its device open");
        return fail(bus, ": VFIO_GROUP_GET_DEVICE_FD failed: ", errno_text(device.error()));
    }
    Fd device_fd(kernel, *device);

    auto space = std::make_unique<Container>(kernel, bus, std::move(container_fd), std::move(group_fd), noiommu);
    auto ranges = space->read_ranges();
    if (!ranges) {
        device_fd.reset();  // the device closes before its group leaves the container
        return std::unexpected(std::move(ranges).error());
    }
    return Opened{std::move(space), std::move(device_fd)};
}

}  // namespace rig::pci::vfio

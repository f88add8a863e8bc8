// The iommufd way (vfio_iommu.hpp; Documentation/userspace-api/iommufd.rst, and
// "vfio device cdev" in Documentation/driver-api/vfio.rst, Linux 6.6 and later).
//
// The order the kernel wants: open /dev/iommu and the function's cdev
// /dev/vfio/devices/vfioN; VFIO_DEVICE_BIND_IOMMUFD the cdev to the iommufd (the device
// fd is unusable before); allocate an IOAS; VFIO_DEVICE_ATTACH_IOMMUFD_PT the device to
// it; read the IOAS's allowed IOVA ranges, which the attach narrowed. Each function gets
// an IOAS of its own. Closing the device fd detaches and unbinds it; closing the iommufd
// destroys the IOAS and its mappings.
#include <fcntl.h>

#include <cerrno>
#include <limits>

#include "rig/text.hpp"
#include "vfio_iommu.hpp"
#include "vfio_iommufd_abi.hpp"

namespace rig::pci::vfio {
namespace {

class Ioas final : public IoSpace {
public:
    Ioas(Kernel& kernel, std::string bus, Fd iommufd, std::uint32_t ioas)
        : kernel_(kernel), bus_(std::move(bus)), iommufd_(std::move(iommufd)), ioas_(ioas) {}

    Addressing addressing() const override { return Addressing::Iommu; }
    const std::vector<IovaRange>& ranges() const override { return ranges_; }

    // IOMMU_IOAS_IOVA_RANGES: with room for num_iovas ranges; EMSGSIZE says how many
    // there are, and the question is asked again with that much room.
    Result<void> read_ranges() {
        std::vector<abi::iommu_iova_range> given(4);
        for (int attempt = 0; attempt < 4; ++attempt) {
            abi::iommu_ioas_iova_ranges query{};
            query.size = sizeof query;
            query.ioas_id = ioas_;
            query.num_iovas = static_cast<std::uint32_t>(given.size());
            query.allowed_iovas = reinterpret_cast<std::uintptr_t>(given.data());
            auto r = kernel_.ioctl(iommufd_.get(), abi::ioas_iova_ranges, &query);
            if (!r && r.error() == EMSGSIZE && query.num_iovas > given.size() && query.num_iovas <= 4096) {
                given.resize(query.num_iovas);
                continue;
            }
            if (!r) return fail(bus_, ": IOMMU_IOAS_IOVA_RANGES failed: ", errno_text(r.error()));
            ranges_.clear();
            for (std::uint32_t i = 0; i < std::min<std::size_t>(query.num_iovas, given.size()); ++i) {
                const auto last = given[i].last;
                const auto end = last == std::numeric_limits<std::uint64_t>::max() ? last : last + 1;
                if (last >= given[i].start) ranges_.push_back({given[i].start, end});
            }
            return {};
        }
        return fail(bus_, ": IOMMU_IOAS_IOVA_RANGES kept asking for more room");
    }

    Result<void> map(std::uint64_t iova, const std::byte* va, std::uint64_t bytes) override {
        abi::iommu_ioas_map request{};
        request.size = sizeof request;
        request.flags = abi::map_fixed_iova | abi::map_readable | abi::map_writeable;
        request.ioas_id = ioas_;
        request.user_va = reinterpret_cast<std::uintptr_t>(va);
        request.length = bytes;
        request.iova = iova;
        auto r = kernel_.ioctl(iommufd_.get(), abi::ioas_map, &request);
        if (!r)
            return fail(bus_, ": IOMMU_IOAS_MAP of ", text::bytes(bytes), " at IOVA ", text::hex(iova),
                        " failed: ", errno_text(r.error()));
        return {};
    }

    Result<void> map_file(std::uint64_t iova, int fd, std::uint64_t bytes) override {
        abi::iommu_ioas_map_file request{};
        request.size = sizeof request;
        request.flags = abi::map_fixed_iova | abi::map_readable | abi::map_writeable;
        request.ioas_id = ioas_;
        request.fd = fd;
        request.start = 0;
        request.length = bytes;
        request.iova = iova;
        auto r = kernel_.ioctl(iommufd_.get(), abi::ioas_map_file, &request);
        if (!r) {
            const int e = r.error();
            if (e == ENOTTY) return fail(bus_, ": the kernel has no IOMMU_IOAS_MAP_FILE (Linux 6.13): ", errno_text(e));
            if (e == EINVAL || e == ENODEV || e == EOPNOTSUPP || e == EBADF)
                return fail(bus_, ": IOMMU_IOAS_MAP_FILE of ", text::bytes(bytes), " at IOVA ", text::hex(iova),
                            " refused the dma-buf (iommufd maps dma-bufs only from Linux 6.19): ", errno_text(e));
            return fail(bus_, ": IOMMU_IOAS_MAP_FILE of ", text::bytes(bytes), " at IOVA ", text::hex(iova),
                        " failed: ", errno_text(e));
        }
        return {};
    }
    bool maps_bar_mappings() const override { return false; }

    Result<void> unmap(std::uint64_t iova, std::uint64_t bytes) override {
        abi::iommu_ioas_unmap request{};
        request.size = sizeof request;
        request.ioas_id = ioas_;
        request.iova = iova;
        request.length = bytes;
        auto r = kernel_.ioctl(iommufd_.get(), abi::ioas_unmap, &request);
        if (!r)
            return fail(bus_, ": IOMMU_IOAS_UNMAP of ", text::bytes(bytes), " at IOVA ", text::hex(iova),
                        " failed: ", errno_text(r.error()));
        return {};
    }

private:
    Kernel& kernel_;
    std::string bus_;
    Fd iommufd_;
    std::uint32_t ioas_;
    std::vector<IovaRange> ranges_;
};

}  // namespace

bool iommufd_present(Kernel& kernel, const Paths& paths) { return kernel.exists(paths.dev("/dev/iommu")); }

Result<Opened> open_iommufd(Kernel& kernel, const Paths& paths, const std::string& bus, const std::string& cdev,
                            const std::string& blocked) {
    const std::string iommu_path = paths.dev("/dev/iommu");
    auto iommufd = kernel.open(iommu_path, O_RDWR);
    if (!iommufd) return fail(bus, ": cannot open ", iommu_path, ": ", errno_text(iommufd.error()));
    Fd iommu(kernel, *iommufd);

    const std::string cdev_path = paths.dev("/dev/vfio/devices/" + cdev);
    auto device = kernel.open(cdev_path, O_RDWR);
    if (!device) {
        if (device.error() == EBUSY) return fail(bus, " is taken by another process: ", cdev_path, " is open");
        return fail(bus, ": cannot open ", cdev_path, ": ", errno_text(device.error()));
    }
    Fd device_fd(kernel, *device);

    abi::vfio_device_bind_iommufd bind{};
    bind.argsz = sizeof bind;
    bind.iommufd = iommu.get();
    auto bound = kernel.ioctl(device_fd.get(), abi::device_bind_iommufd, &bind);
    if (!bound) {
        // The bind claims the group's DMA (iommu_device_claim_dma_owner()): EPERM where a
        // kernel driver of the group holds it, or another process's iommufd does.
        if (!blocked.empty() && (bound.error() == EPERM || bound.error() == EBUSY))
            return fail(bus, ": ", blocked, " (VFIO_DEVICE_BIND_IOMMUFD: ", errno_text(bound.error()), ")");
        if (bound.error() == EBUSY) return fail(bus, " is taken by another process: its vfio cdev is bound");
        return fail(bus, ": VFIO_DEVICE_BIND_IOMMUFD failed: ", errno_text(bound.error()));
    }

    abi::iommu_ioas_alloc alloc{};
    alloc.size = sizeof alloc;
    auto allocated = kernel.ioctl(iommu.get(), abi::ioas_alloc, &alloc);
    if (!allocated) return fail(bus, ": IOMMU_IOAS_ALLOC failed: ", errno_text(allocated.error()));

    abi::vfio_device_attach_iommufd_pt attach{};
    attach.argsz = sizeof attach;
    attach.pt_id = alloc.out_ioas_id;
    auto attached = kernel.ioctl(device_fd.get(), abi::device_attach_iommufd_pt, &attach);
    if (!attached) return fail(bus, ": VFIO_DEVICE_ATTACH_IOMMUFD_PT failed: ", errno_text(attached.error()));

    auto space = std::make_unique<Ioas>(kernel, bus, std::move(iommu), alloc.out_ioas_id);
    auto ranges = space->read_ranges();
    if (!ranges) {
        device_fd.reset();
        return std::unexpected(std::move(ranges).error());
    }
    return Opened{std::move(space), std::move(device_fd)};
}

}  // namespace rig::pci::vfio

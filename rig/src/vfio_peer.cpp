// The pieces of a peer BAR mapping that speak to the kernel (vfio_peer.hpp): the dma-buf
// export's argument and call, and the sysfs resource mapping.
#include "vfio_peer.hpp"

#include <fcntl.h>
#include <linux/vfio.h>
#include <sys/mman.h>

#include "rig/text.hpp"

namespace rig::pci::vfio {

std::vector<std::byte> dmabuf_request(unsigned region, std::uint64_t offset, std::uint64_t bytes) {
    vfio_device_feature head{};
    vfio_device_feature_dma_buf buf{};
    const vfio_region_dma_range range{offset, bytes};
    const std::size_t total = sizeof head + sizeof buf + sizeof range;
    head.argsz = static_cast<std::uint32_t>(total);
    head.flags = VFIO_DEVICE_FEATURE_GET | feature_dma_buf;
    buf.region_index = region;
    buf.open_flags = O_RDWR | O_CLOEXEC;
    buf.flags = 0;
    buf.nr_ranges = 1;
    std::vector<std::byte> out(total);
    std::memcpy(out.data(), &head, sizeof head);
    std::memcpy(out.data() + sizeof head, &buf, sizeof buf);
    std::memcpy(out.data() + sizeof head + sizeof buf, &range, sizeof range);
    return out;
}

Result<Fd> export_dmabuf(Kernel& kernel, int device_fd, const std::string& provider, unsigned bar, std::uint64_t offset,
                         std::uint64_t bytes) {
    auto request = dmabuf_request(bar, offset, bytes);
    auto fd = kernel.ioctl(device_fd, VFIO_DEVICE_FEATURE, request.data());
    const std::string what = provider + " BAR" + std::to_string(bar);
    if (!fd) {
        if (fd.error() == ENOTTY || fd.error() == EINVAL)
            return fail("the kernel has no VFIO dma-buf export of ", what,
                        " (VFIO_DEVICE_FEATURE_DMA_BUF, Linux 6.19): ", errno_text(fd.error()));
        return fail("VFIO_DEVICE_FEATURE_DMA_BUF of ", text::bytes(bytes), " at ", text::hex(offset), " of ", what,
                    " failed: ", errno_text(fd.error()));
    }
    return Fd(kernel, *fd);
}

Result<Mapping> map_resource(Kernel& kernel, const std::filesystem::path& root, const std::string& provider,
                             unsigned bar, std::uint64_t offset, std::uint64_t bytes) {
    const std::string file = (root / "sys/bus/pci/devices" / provider / ("resource" + std::to_string(bar))).string();
    auto fd = kernel.open(file, O_RDWR | O_CLOEXEC);
    if (!fd) {
        if (fd.error() == EACCES || fd.error() == EPERM)
            return fail("cannot open ", file, ": ", errno_text(fd.error()),
                        " (it needs root, and a kernel not locked down: LOCKDOWN_PCI_ACCESS)");
        if (fd.error() == ENOENT)
            return fail("there is no ", file, " (no such function on this machine, or BAR", std::to_string(bar),
                        " is not a memory BAR)");
        return fail("cannot open ", file, ": ", errno_text(fd.error()));
    }
    Fd owned(kernel, *fd);
    auto at = kernel.mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, owned.get(), offset);
    if (!at)
        return fail("mmap of ", text::bytes(bytes), " at ", text::hex(offset), " of ", file,
                    " failed: ", errno_text(at.error()),
                    at.error() == EPERM ? " (a kernel locked down refuses it: LOCKDOWN_PCI_ACCESS)" : "");
    return Mapping(kernel, *at, bytes);  // the mapping outlives the file descriptor
}

}  // namespace rig::pci::vfio

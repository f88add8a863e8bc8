// The VFIO device fd (vfio_device.hpp): regions with the argsz retry, the MSI-X hole,
// reserve-then-map BARs, MSI-X eventfds, reset.
#include "vfio_device.hpp"

#include <linux/vfio.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "capability_walk.hpp"
#include "rig/pci/config.hpp"
#include "rig/text.hpp"
#include "rig/little_endian.hpp"
#include "vfio_info.hpp"

namespace rig::pci::vfio {

// The device fd as remote windows reach it: they keep the record, and close() marks it
// closed before the fd goes, so a window used after release reads all ones.
struct DeviceFd {
    std::shared_ptr<Kernel> kernel;
    Fd fd;
    std::atomic<bool> closed{false};
};

namespace {

// Accesses through pread/pwrite of the device fd: the parts of a BAR the process cannot
// map (the MSI-X hole, a BAR without mmap). A failed access reads all ones.
class RegionTransport final : public Transport {
public:
    explicit RegionTransport(std::shared_ptr<DeviceFd> device) : device_(std::move(device)) {}

    std::uint64_t read(std::uint64_t address, unsigned width) override {
        std::array<std::byte, 8> bytes{};
        if (!move_in(address, std::span(bytes).first(width))) return width == 8 ? ~0ull : (1ull << (8 * width)) - 1;
        return little_endian::load<std::uint64_t>(bytes);  // x86-64 and the bus are little-endian
    }
    void write(std::uint64_t address, unsigned width, std::uint64_t value) override {
        std::array<std::byte, 8> bytes{};
        little_endian::store(std::span(bytes), value);
        move_out(address, std::span<const std::byte>(bytes).first(width));
    }
    void read(std::uint64_t address, std::span<std::byte> out) override {
        if (!move_in(address, out)) std::fill(out.begin(), out.end(), std::byte{0xff});
    }
    void write(std::uint64_t address, std::span<const std::byte> in) override { move_out(address, in); }
    std::optional<std::string> failed() const override { return std::nullopt; }

private:
    bool move_in(std::uint64_t address, std::span<std::byte> out) {
        if (device_->closed) return false;
        auto n = device_->kernel->pread(device_->fd.get(), out, address);
        return n && *n == out.size();
    }
    void move_out(std::uint64_t address, std::span<const std::byte> in) {
        // A posted write: nothing answers it, as nothing answers a memory write on the bus.
        if (!device_->closed) (void)device_->kernel->pwrite(device_->fd.get(), in, address);
    }

    std::shared_ptr<DeviceFd> device_;
};

std::string region_name(unsigned index) {
    if (index == VFIO_PCI_CONFIG_REGION_INDEX) return "the configuration region";
    return "BAR" + std::to_string(index);
}

}  // namespace

Result<RegionInfo> region_info(Kernel& kernel, int device, unsigned index, const std::string& bus) {
    vfio_region_info query{};
    query.argsz = sizeof query;
    query.index = index;
    auto info = get_info(kernel, device, VFIO_DEVICE_GET_REGION_INFO, little_endian::bytes_of(query),
                         bus + ": VFIO_DEVICE_GET_REGION_INFO of " + region_name(index));
    if (!info) return std::unexpected(std::move(info).error());
    vfio_region_info answer{};
    std::memcpy(&answer, info->data(), sizeof answer);
    RegionInfo region{index, answer.flags, answer.size, answer.offset, std::nullopt, false};
    if (!(answer.flags & VFIO_REGION_INFO_FLAG_CAPS)) return region;
    for (const Capability& cap : capabilities(*info, answer.cap_offset)) {
        if (cap.id == VFIO_REGION_INFO_CAP_MSIX_MAPPABLE) region.msix_mappable = true;
        if (cap.id != VFIO_REGION_INFO_CAP_SPARSE_MMAP) continue;
        vfio_region_info_cap_sparse_mmap sparse{};
        if (cap.bytes.size() < sizeof sparse) continue;
        std::memcpy(&sparse, cap.bytes.data(), sizeof sparse);
        const std::size_t fit = (cap.bytes.size() - sizeof sparse) / sizeof(vfio_region_sparse_mmap_area);
        std::vector<Area> areas;
        for (std::size_t i = 0; i < std::min<std::size_t>(sparse.nr_areas, fit); ++i) {
            vfio_region_sparse_mmap_area area{};
            std::memcpy(&area, cap.bytes.data() + sizeof sparse + i * sizeof area, sizeof area);
            if (area.size != 0 && area.offset <= answer.size && area.size <= answer.size - area.offset)
                areas.push_back({area.offset, area.size});
        }
        region.sparse = std::move(areas);
    }
    return region;
}

std::vector<Area> mappable_areas(const RegionInfo& region, const std::optional<MsixTable>& table, std::uint64_t page) {
    if (!(region.flags & VFIO_REGION_INFO_FLAG_MMAP) || region.bytes == 0) return {};
    std::vector<Area> areas;
    const auto whole_pages = [&](Area a) {
        // An area the kernel gave is page-aligned; keep only the whole pages of one that is not.
        const std::uint64_t start = (a.offset + page - 1) / page * page;
        const std::uint64_t end = (a.offset + a.bytes) / page * page;
        if (end > start) areas.push_back({start, end - start});
    };
    if (region.sparse) {
        for (const Area& a : *region.sparse) whole_pages(a);
        return areas;
    }
    if (!table || table->bar != region.index || region.msix_mappable || table->bytes == 0) {
        whole_pages({0, region.bytes});
        return areas;
    }
    // The hole: the table's range widened to whole pages, clipped to the BAR.
    const std::uint64_t hole_start = table->offset / page * page;
    const std::uint64_t hole_end = std::min(region.bytes, (table->offset + table->bytes + page - 1) / page * page);
    if (hole_start > 0) whole_pages({0, hole_start});
    if (hole_end < region.bytes) whole_pages({hole_end, region.bytes - hole_end});
    return areas;
}

int Device::fd() const { return shared_ && !shared_->closed.load() ? shared_->fd.get() : -1; }

Result<std::unique_ptr<Device>> Device::open(std::shared_ptr<Kernel> kernel, Fd fd, std::string bus,
                                             std::uint64_t page) {
    std::unique_ptr<Device> device(new Device());
    device->kernel_ = kernel;
    device->bus_ = std::move(bus);
    device->page_ = page;
    const std::string& b = device->bus_;

    vfio_device_info query{};
    query.argsz = sizeof query;
    auto info =
        get_info(*kernel, fd.get(), VFIO_DEVICE_GET_INFO, little_endian::bytes_of(query), b + ": VFIO_DEVICE_GET_INFO");
    if (!info) return std::unexpected(std::move(info).error());
    vfio_device_info answer{};
    std::memcpy(&answer, info->data(), sizeof answer);
    if (!(answer.flags & VFIO_DEVICE_FLAGS_PCI)) return fail(b, ": the VFIO device is not a vfio-pci device");
    if (answer.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX)
        return fail(b, ": the VFIO device has ", std::to_string(answer.num_regions),
                    " regions, no configuration region");
    device->flags_ = answer.flags;

    for (unsigned i = 0; i < device->bars_.size(); ++i) {
        auto region = region_info(*kernel, fd.get(), VFIO_PCI_BAR0_REGION_INDEX + i, b);
        if (!region) return std::unexpected(std::move(region).error());
        device->bars_[i] = std::move(*region);
    }
    auto config = region_info(*kernel, fd.get(), VFIO_PCI_CONFIG_REGION_INDEX, b);
    if (!config) return std::unexpected(std::move(config).error());
    device->config_ = std::move(*config);

    device->shared_ = std::make_shared<DeviceFd>();
    device->shared_->kernel = kernel;
    device->shared_->fd = std::move(fd);

    // §7.7.2: the MSI-X capability says where the table lies and how many vectors there are.
    auto read = [&](std::uint32_t offset, unsigned bytes) { return device->config(offset, bytes); };
    if (auto msix = find_capability(read, config::capability_msix)) {
        const std::uint32_t control = device->config(*msix + config::msix_message_control, 2);
        const std::uint32_t table = device->config(*msix + config::msix_table, 4);
        if (control != 0xffff) {
            device->vectors_ = static_cast<unsigned>(config::msix_table_size.of(control)) + 1;
            device->msix_ = MsixTable{static_cast<unsigned>(config::msix_bir.of(table)),
                                      table & config::msix_offset_mask, device->vectors_ * config::msix_entry_bytes};
        }
    }
    return device;
}

Device::~Device() { close(); }

std::uint32_t Device::config(std::uint32_t offset, unsigned bytes) {
    std::array<std::byte, 4> buffer{};
    const auto ones = static_cast<std::uint32_t>((1ull << (8 * bytes)) - 1);
    if (shared_->closed) return ones;
    auto n = kernel_->pread(shared_->fd.get(), std::span(buffer).first(bytes), config_.offset + offset);
    if (!n || *n != bytes) return ones;
    return little_endian::load<std::uint32_t>(buffer);
}

Result<void> Device::set_config(std::uint32_t offset, unsigned bytes, std::uint32_t value) {
    std::array<std::byte, 4> buffer{};
    little_endian::store(std::span(buffer), value);
    if (shared_->closed) return fail(bus_, ": configuration write after the device was closed");
    auto n =
        kernel_->pwrite(shared_->fd.get(), std::span<const std::byte>(buffer).first(bytes), config_.offset + offset);
    if (!n)
        return fail(bus_, ": configuration write of ", std::to_string(bytes), " bytes at ", text::hex(offset),
                    " failed: ", errno_text(n.error()));
    if (*n != bytes)
        return fail(bus_, ": configuration write at ", text::hex(offset), " moved ", std::to_string(*n), " of ",
                    std::to_string(bytes), " bytes");
    return {};
}

Result<Window> Device::map(unsigned bar, std::uint64_t offset, std::uint64_t bytes) {
    const RegionInfo& region = bars_.at(bar);
    const std::string name = bus_ + ": BAR" + std::to_string(bar);
    std::lock_guard lock(mutex_);
    if (shared_->closed) return fail(name, ": the device was closed");
    const auto areas = mappable_areas(region, msix_, page_);
    const auto inside = std::find_if(areas.begin(), areas.end(), [&](const Area& a) {
        return offset >= a.offset && offset - a.offset <= a.bytes && bytes <= a.bytes - (offset - a.offset);
    });
    if (inside != areas.end()) {
        auto& mapped = mapped_[bar];
        if (!mapped) {
            // Reserve the whole BAR's range, then map each area over it.
            auto reservation =
                kernel_->mmap(nullptr, region.bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (!reservation)
                return fail(name, ": cannot reserve ", text::bytes(region.bytes),
                            " of addresses: ", errno_text(reservation.error()));
            Mapped m{Mapping(*kernel_, *reservation, region.bytes), {}};
            for (const Area& a : areas) {
                auto p = kernel_->mmap(*reservation + a.offset, a.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                                       shared_->fd.get(), region.offset + a.offset);
                if (!p)
                    return fail(name, ": mmap of ", text::bytes(a.bytes), " at ", text::hex(a.offset),
                                " failed: ", errno_text(p.error()));
                m.areas.push_back(a);
            }
            mapped = std::move(m);
        }
        return Window::mapped(mapped->reservation.data() + offset, bytes);
    }
    if (!(region.flags & VFIO_REGION_INFO_FLAG_READ) || !(region.flags & VFIO_REGION_INFO_FLAG_WRITE))
        return fail(name, ": the kernel neither maps ", text::hex(offset), " of it nor lets it be read and written");
    auto transport = std::make_shared<RegionTransport>(shared_);
    return Window::remote(std::move(transport), region.offset + offset, bytes);
}

Result<void> Device::arm_interrupts() {
    if (vectors_ == 0) return {};
    vfio_irq_info query{};
    query.argsz = sizeof query;
    query.index = VFIO_PCI_MSIX_IRQ_INDEX;
    auto info = get_info(*kernel_, shared_->fd.get(), VFIO_DEVICE_GET_IRQ_INFO, little_endian::bytes_of(query),
                         bus_ + ": VFIO_DEVICE_GET_IRQ_INFO of MSI-X");
    if (!info) return std::unexpected(std::move(info).error());
    vfio_irq_info answer{};
    std::memcpy(&answer, info->data(), sizeof answer);
    if (!(answer.flags & VFIO_IRQ_INFO_EVENTFD)) return fail(bus_, ": VFIO cannot signal MSI-X through eventfds");
    vectors_ = std::min(vectors_, answer.count);
    std::lock_guard lock(mutex_);
    std::vector<Fd> fds;
    std::vector<std::byte> set(sizeof(vfio_irq_set) + vectors_ * sizeof(std::int32_t));
    for (unsigned v = 0; v < vectors_; ++v) {
        auto fd = kernel_->eventfd();
        if (!fd) return fail(bus_, ": eventfd for MSI-X vector ", std::to_string(v), ": ", errno_text(fd.error()));
        fds.emplace_back(*kernel_, *fd);
        const std::int32_t value = *fd;
        std::memcpy(set.data() + sizeof(vfio_irq_set) + v * sizeof value, &value, sizeof value);
    }
    vfio_irq_set header{};
    header.argsz = static_cast<std::uint32_t>(set.size());
    header.flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
    header.index = VFIO_PCI_MSIX_IRQ_INDEX;
    header.start = 0;
    header.count = vectors_;
    std::memcpy(set.data(), &header, sizeof header);
    auto r = kernel_->ioctl(shared_->fd.get(), VFIO_DEVICE_SET_IRQS, set.data());
    if (!r)
        return fail(bus_, ": VFIO_DEVICE_SET_IRQS of ", std::to_string(vectors_),
                    " MSI-X vectors failed: ", errno_text(r.error()));
    eventfds_ = std::move(fds);
    return {};
}

bool Device::wait(unsigned vector, std::chrono::nanoseconds timeout) {
    int fd = -1;
    {
        std::lock_guard lock(mutex_);
        if (vector >= eventfds_.size()) return false;
        fd = eventfds_[vector].get();
    }
    auto fired = kernel_->wait(fd, timeout);
    return fired && *fired;
}

Result<void> Device::reset() {
    if (!(flags_ & VFIO_DEVICE_FLAGS_RESET))
        return fail(bus_, ": has no reset VFIO can use (no Function Level Reset, power-management or bus reset)");
    auto r = kernel_->ioctl(shared_->fd.get(), VFIO_DEVICE_RESET, nullptr);
    if (!r) return fail(bus_, ": VFIO_DEVICE_RESET failed: ", errno_text(r.error()));
    return {};
}

void Device::close() {
    if (!shared_ || shared_->closed.exchange(true)) return;
    std::lock_guard lock(mutex_);
    if (!eventfds_.empty()) {
        vfio_irq_set none{};
        none.argsz = sizeof none;
        none.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER;
        none.index = VFIO_PCI_MSIX_IRQ_INDEX;
        (void)kernel_->ioctl(shared_->fd.get(), VFIO_DEVICE_SET_IRQS, &none);  // closing the fd disarms them too
        eventfds_.clear();
    }
    for (auto& m : mapped_) m.reset();
    shared_->fd.reset();
}

}  // namespace rig::pci::vfio

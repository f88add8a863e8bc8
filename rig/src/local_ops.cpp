// This computer's operations (local_ops.hpp): functions taken through Linux VFIO.
//
// A take, in order, each step's refusal an Error naming the bus and the cause:
//  1. the function exists under sys/bus/pci/devices;
//  2. it is bound to vfio-pci, or to no driver ("0000:03:00.0 is bound to the driver
//     amdgpu": VFIO cannot reach a function another kernel driver drives);
//  3. its sysfs `config` file is locked (flock), so two processes never drive it;
//  4. VFIO is there (/dev/vfio/vfio or /dev/iommu), and the function is bound to vfio-pci;
//  5. iommufd where /dev/iommu and the function's vfio cdev exist, else the container and
//     group of linux/vfio.h (vfio_iommu.hpp); a VFIO no-IOMMU group gives
//     Addressing::Physical, an IOMMU Addressing::Iommu;
//  6. the device fd's regions are read and an eventfd is armed for each MSI-X vector.
//
// A peer mapping (map_peer) maps another function's BAR into this function's domain by
// the ways vfio_peer.hpp sets out: type1 VFIO_IOMMU_MAP_DMA of a process mapping of the
// BAR, iommufd IOMMU_IOAS_MAP_FILE of a dma-buf its VFIO device exports.
//
// DMA memory is process memory (dma_memory.hpp). Behind an IOMMU it is mapped at IOVAs
// this file chooses from the IOMMU's ranges, top-down below the caller's bound; without
// one its runs are its physical pages, read from /proc/self/pagemap and locked in RAM.
//
// Release (transport.hpp's order): bus mastering off and read back; the BAR mappings,
// interrupts and device fd go; then, only where bus mastering read off, the pins and DMA
// memory. Where it did not, the memory is kept (not given back to the system, whose pages
// the device might still write) and release answers false. Each record is dropped before
// its give-back, so a release cut by an exception and called again gives back only what
// is left.
#include "local_ops.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "dma_memory.hpp"
#include "range_allocator.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/groups.hpp"
#include "rig/pci/reservation.hpp"
#include "rig/text.hpp"
#include "sysfs.hpp"
#include "vfio_device.hpp"
#include "vfio_iommu.hpp"
#include "vfio_peer.hpp"
#include "vfio_sysfs.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;
using vfio::Kernel;

std::uint64_t system_page() { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }

// The functions this process holds through one LocalOps, by bus address: a peer mapping
// reaches a provider's BAR through the provider's own VFIO device where it is held.
struct Held {
    std::mutex mutex;
    std::map<std::string, std::weak_ptr<vfio::Device>, std::less<>> devices;

    std::shared_ptr<vfio::Device> find(std::string_view bus) {
        std::lock_guard lock(mutex);
        const auto it = devices.find(bus);
        return it == devices.end() ? nullptr : it->second.lock();
    }
};

class LocalFunction final : public FunctionOps {
public:
    LocalFunction(std::shared_ptr<Kernel> kernel, std::string bus, std::uint64_t page, vfio::Fd lock,
                  std::unique_ptr<vfio::IoSpace> space, std::unique_ptr<vfio::Device> device,
                  std::array<std::optional<Bar>, 6> bars, std::shared_ptr<Held> held, fs::path root)
        : kernel_(std::move(kernel)),
          bus_(std::move(bus)),
          page_(page),
          lock_(std::move(lock)),
          space_(std::move(space)),
          device_(std::move(device)),
          bars_(bars),
          held_(std::move(held)),
          root_(std::move(root)) {
        for (const auto& range : space_->ranges()) iovas_.add(range.start, range.end);
        std::lock_guard hold(held_->mutex);
        held_->devices[bus_] = device_;
    }
    ~LocalFunction() override {
        // Memory a device that would not stop mastering may still write never goes back.
        if (!release())
            for (auto& a : allocations_) a.memory.leak();
    }

    Addressing addressing() const override { return space_->addressing(); }
    // vfio-pci resets a function when the process that held it closes it, and the kernel
    // tears down its IOMMU domain: nothing a dead process left is reachable.
    bool inherited() const override { return false; }

    std::uint32_t config(std::uint32_t offset, unsigned bytes) override { return device_->config(offset, bytes); }
    void set_config(std::uint32_t offset, unsigned bytes, std::uint32_t value) override {
        (void)device_->set_config(offset, bytes, value);  // release reads Bus Master Enable back
    }

    std::optional<Bar> bar(unsigned index) override {
        if (index >= bars_.size() || device_->region(index).bytes == 0) return std::nullopt;
        return bars_[index];
    }

    // VFIO maps BARs uncached (pgprot_noncached): write-combining is a hint it cannot give.
    Result<Window> map(unsigned index, std::uint64_t offset, std::uint64_t bytes, Caching) override {
        return device_->map(index, offset, bytes);
    }
    // A BAR stays mapped until release: windows are views of the one mapping.
    void unmap(const Window&) override {}

    bool interrupt(unsigned vector, std::chrono::nanoseconds timeout) override {
        return device_->wait(vector, timeout);
    }
    Result<void> reset() override { return device_->reset(); }
    Result<void> forget() override { return {}; }

    Result<std::optional<Dma>> alloc_dma(Contiguity contiguity, std::optional<std::uintptr_t> va, std::uint64_t below,
                                         std::uint64_t bytes) override {
        std::lock_guard lock(mutex_);
        const bool physical = addressing() == Addressing::Physical;
        auto memory = DmaMemory::map(*kernel_, bytes, va, physical ? Residency::Locked : Residency::Movable,
                                     bus_ + ": alloc_dma");
        if (!memory) return std::unexpected(std::move(memory).error());
        Allocation a{std::move(*memory), {}, std::nullopt};
        if (physical) {
            auto runs = physical_runs(*kernel_, reinterpret_cast<std::uintptr_t>(a.memory.data()), bytes, page_);
            if (!runs) return fail(bus_, ": ", runs.error());
            // Without an IOMMU, contiguity is what the kernel happened to give.
            if (contiguity == Contiguity::Contiguous && runs->size() > 1) return std::optional<Dma>();
            a.runs = std::move(*runs);
        } else {
            auto iova = map_iova(a.memory.data(), bytes, below);
            if (!iova) return std::unexpected(std::move(iova).error());
            if (!*iova) return std::optional<Dma>();
            a.iova = **iova;
            a.runs = {{DmaAddress{**iova}, bytes}};
        }
        Dma dma{Window::mapped(a.memory.data(), bytes), a.runs};
        allocations_.push_back(std::move(a));
        return dma;
    }

    void free_dma(const Window& window) override {
        std::lock_guard lock(mutex_);
        auto it = std::find_if(allocations_.begin(), allocations_.end(),
                               [&](const Allocation& a) { return a.memory.data() == window.data(); });
        if (it == allocations_.end()) return;
        Allocation a = std::move(*it);
        allocations_.erase(it);
        give_back(a);
    }

    Result<std::optional<std::vector<Run>>> pin(std::uint64_t below, std::uintptr_t address,
                                                std::uint64_t bytes) override {
        std::lock_guard lock(mutex_);
        if (addressing() == Addressing::Physical) {
            // Function let through only memory alloc_dma gave: its runs, cut to the range.
            for (const Allocation& a : allocations_) {
                const auto base = reinterpret_cast<std::uintptr_t>(a.memory.data());
                if (address < base || address - base + bytes > a.memory.size()) continue;
                pins_.push_back({address, bytes, std::nullopt});
                return std::optional(cut(a.runs, address - base, bytes));
            }
            return fail(bus_, ": pin of ", text::bytes(bytes), " at ", text::hex(address),
                        ": not memory alloc_dma gave");
        }
        const std::uint64_t rounded = (bytes + page_ - 1) / page_ * page_;
        auto iova = map_iova(reinterpret_cast<const std::byte*>(address), rounded, below);
        if (!iova) return std::unexpected(std::move(iova).error());
        if (!*iova) return std::optional<std::vector<Run>>();
        pins_.push_back({address, bytes, **iova});
        return std::optional(std::vector<Run>{{DmaAddress{**iova}, bytes}});
    }

    void unpin(std::uintptr_t address, std::uint64_t bytes) override {
        std::lock_guard lock(mutex_);
        auto it = std::find_if(pins_.begin(), pins_.end(),
                               [&](const Pinned& p) { return p.address == address && p.bytes == bytes; });
        if (it == pins_.end()) return;
        Pinned p = *it;
        pins_.erase(it);
        give_back(p);
    }

    // vfio_peer.hpp: the ways, by IOMMU interface; each failure says which way was tried
    // and what refused it.
    Result<std::optional<DmaAddress>> map_peer(std::string_view provider_view, unsigned bar, std::uint64_t offset,
                                               std::uint64_t bytes, std::uint64_t below) override {
        std::lock_guard lock(mutex_);
        const std::string provider(provider_view);
        const std::string what = text::bytes(bytes) + " of " + provider + " BAR" + std::to_string(bar);
        if (addressing() == Addressing::Physical)
            return fail(bus_, ": cannot map ", what,
                        " into its IOMMU domain: it has none (VFIO's no-IOMMU mode); it "
                        "reaches the BAR at its bus address");
        auto iova = iovas_.allocate(bytes, page_, below);
        if (!iova) return std::optional<DmaAddress>();
        auto peer = map_peer_at(*iova, provider, bar, offset, bytes);
        if (!peer) {
            iovas_.free(*iova, bytes);
            return fail(bus_, ": cannot map ", what, " into its IOMMU domain: ", peer.error());
        }
        peers_.push_back(std::move(*peer));
        return std::optional(DmaAddress{*iova});
    }

    void unmap_peer(DmaAddress address, std::uint64_t bytes) override {
        std::lock_guard lock(mutex_);
        auto it = std::find_if(peers_.begin(), peers_.end(),
                               [&](const Peer& p) { return p.iova == address.value && p.bytes == bytes; });
        if (it == peers_.end()) return;
        Peer p = std::move(*it);
        peers_.erase(it);
        give_back(p);
    }

    bool release() override {
        std::lock_guard lock(mutex_);
        if (!bus_master_checked_) {
            // Bus mastering off, and read back: the kernel may refuse the write.
            const auto command = static_cast<std::uint16_t>(device_->config(config::command, 2));
            if (command != 0xffff && (command & config::command_bus_master))
                (void)device_->set_config(config::command, 2, command & ~config::command_bus_master);
            const auto after = static_cast<std::uint16_t>(device_->config(config::command, 2));
            bus_master_off_ = after != 0xffff && !(after & config::command_bus_master);
            bus_master_checked_ = true;
        }
        device_->close();                    // windows: the BAR mappings; and the interrupts and device fd
        if (!bus_master_off_) return false;  // the device may still write the memory: keep it
        while (!pins_.empty()) {
            Pinned p = pins_.back();
            pins_.pop_back();
            give_back(p);
        }
        while (!peers_.empty()) {
            Peer p = std::move(peers_.back());
            peers_.pop_back();
            give_back(p);
        }
        while (!allocations_.empty()) {
            Allocation a = std::move(allocations_.back());
            allocations_.pop_back();
            give_back(a);
        }
        space_.reset();  // the container or IOAS, after the device fd
        lock_.reset();
        return true;
    }

private:
    struct Allocation {
        DmaMemory memory;
        std::vector<Run> runs;
        std::optional<std::uint64_t> iova;
    };
    struct Pinned {
        std::uintptr_t address;
        std::uint64_t bytes;
        std::optional<std::uint64_t> iova;
    };
    // A peer BAR range at IOVAs of this function's domain, with what keeps it reachable:
    // the dma-buf (iommufd), or the process mapping type1 took its PFNs from, which stays
    // mapped until the IOMMU mapping goes.
    struct Peer {
        std::uint64_t iova = 0, bytes = 0;
        vfio::Fd dmabuf;
        vfio::Mapping resource;                  // sysfs resourceN
        std::shared_ptr<vfio::Device> provider;  // the provider's own region mapping
        Window window;
    };

    // The provider's VFIO device where this process holds it.
    std::shared_ptr<vfio::Device> held_provider(const std::string& provider) const {
        auto device = held_->find(provider);
        return device && device->fd() >= 0 ? device : nullptr;
    }

    Result<Peer> map_peer_at(std::uint64_t iova, const std::string& provider, unsigned bar, std::uint64_t offset,
                             std::uint64_t bytes) {
        auto dir = sysfs::function_dir(root_, provider);
        if (!dir) return std::unexpected(std::move(dir).error());
        auto bars = vfio::read_bars(*dir);
        if (!bars) return std::unexpected(std::move(bars).error());
        const auto& b = (*bars)[bar];
        if (!b) return fail(provider, " has no memory BAR", std::to_string(bar));
        if (offset > b->bytes || bytes > b->bytes - offset)
            return fail("bytes [", text::hex(offset), ", ", text::hex(offset + bytes), ") lie outside ", provider,
                        " BAR", std::to_string(bar), " (", text::bytes(b->bytes), ")");
        Peer peer;
        peer.iova = iova;
        peer.bytes = bytes;
        const auto device = held_provider(provider);
        if (!space_->maps_bar_mappings()) {
            // iommufd: the dma-buf way alone.
            if (!device)
                return fail(
                    "iommufd maps a peer BAR only as a dma-buf its VFIO device exports (IOMMU_IOAS_MAP_FILE, "
                    "Linux 6.19), and this process does not hold ",
                    provider,
                    " through VFIO (IOMMU_IOAS_MAP "
                    "pins pages, which a BAR mapping has none of): take ",
                    provider, " first");
            auto buf = vfio::export_dmabuf(*kernel_, device->fd(), provider, bar, offset, bytes);
            if (!buf) return fail("the dma-buf way: ", buf.error());
            if (auto mapped = space_->map_file(iova, buf->get(), bytes); !mapped)
                return fail("the dma-buf way: ", mapped.error());
            peer.dmabuf = std::move(*buf);
            return peer;
        }
        // The VFIO container (type1): VFIO_IOMMU_MAP_DMA of a process mapping of the BAR.
        std::string way;
        const std::byte* va = nullptr;
        if (device) {
            way = "VFIO_IOMMU_MAP_DMA of " + provider + "'s own VFIO region mapping";
            auto window = device->map(bar, offset, bytes);
            if (!window) return fail(way, ": ", window.error());
            if (!window->is_mapped())
                return fail(way,
                            ": the range cannot be mapped into the process (an MSI-X table or a region VFIO "
                            "does not let the process mmap)");
            va = window->data();
            peer.window = std::move(*window);
            peer.provider = device;
        } else {
            way = "VFIO_IOMMU_MAP_DMA of a mapping of " + provider + "'s sysfs resource" + std::to_string(bar) +
                  " (this process does not hold " + provider + ")";
            auto mapping = vfio::map_resource(*kernel_, root_, provider, bar, offset, bytes);
            if (!mapping) return fail(way, ": ", mapping.error());
            va = mapping->data();
            peer.resource = std::move(*mapping);
        }
        if (auto mapped = space_->map(iova, va, bytes); !mapped) {
            // vaddr_get_pfns() in drivers/vfio/vfio_iommu_type1.c: EFAULT where it cannot
            // resolve the mapping's PFNs (before Linux 5.7 a BAR mmap not yet faulted in).
            return fail(way, ": ", mapped.error());
        }
        return peer;
    }

    // An IOVA range below `below` mapped to `bytes` at `va`; nullopt where none is free.
    Result<std::optional<std::uint64_t>> map_iova(const std::byte* va, std::uint64_t bytes, std::uint64_t below) {
        auto iova = iovas_.allocate(bytes, page_, below);
        if (!iova) return std::optional<std::uint64_t>();
        auto mapped = space_->map(*iova, va, bytes);
        if (!mapped) {
            iovas_.free(*iova, bytes);
            return std::unexpected(std::move(mapped).error());
        }
        return iova;
    }

    void give_back(Allocation& a) {
        if (a.iova && space_->unmap(*a.iova, a.memory.size())) iovas_.free(*a.iova, a.memory.size());
        a.memory.reset();
    }

    void give_back(Peer& p) {
        if (space_->unmap(p.iova, p.bytes)) iovas_.free(p.iova, p.bytes);
        p.dmabuf.reset();
        p.resource.reset();
    }

    void give_back(const Pinned& p) {
        if (!p.iova) return;
        const std::uint64_t rounded = (p.bytes + page_ - 1) / page_ * page_;
        if (space_->unmap(*p.iova, rounded)) iovas_.free(*p.iova, rounded);
    }

    // The runs covering `bytes` from byte `offset` of memory whose runs are `runs`.
    static std::vector<Run> cut(const std::vector<Run>& runs, std::uint64_t offset, std::uint64_t bytes) {
        std::vector<Run> out;
        for (const Run& r : runs) {
            if (bytes == 0) break;
            if (offset >= r.bytes) {
                offset -= r.bytes;
                continue;
            }
            const std::uint64_t n = std::min(bytes, r.bytes - offset);
            out.push_back({r.address + offset, n});
            bytes -= n;
            offset = 0;
        }
        return out;
    }

    std::shared_ptr<Kernel> kernel_;
    std::string bus_;
    std::uint64_t page_;
    vfio::Fd lock_;
    std::unique_ptr<vfio::IoSpace> space_;
    std::shared_ptr<vfio::Device> device_;
    std::array<std::optional<Bar>, 6> bars_;
    std::mutex mutex_;
    RangeAllocator iovas_;
    std::vector<Allocation> allocations_;
    std::vector<Pinned> pins_;
    std::vector<Peer> peers_;
    std::shared_ptr<Held> held_;
    fs::path root_;
    bool bus_master_checked_ = false;
    bool bus_master_off_ = false;
};

class LocalOps final : public Ops {
public:
    LocalOps(fs::path root, std::shared_ptr<Kernel> kernel) : root_(std::move(root)), kernel_(std::move(kernel)) {
        // Device nodes lie under the root too, so a fixture tree can stand for /dev.
        paths_.root = root_ == fs::path("/") ? "" : root_.string();
    }

    std::optional<std::string> failed() const override { return std::nullopt; }
    std::uint64_t page() const override { return system_page(); }
    Result<std::vector<Id>> functions() override { return sysfs::functions(root_); }
    Result<void> reserve(std::uintptr_t base, std::uint64_t bytes) override { return reserve_addresses(base, bytes); }

    Result<std::unique_ptr<FunctionOps>> take(std::string_view bus_view) override {
        const std::string bus(bus_view);
        auto dir = sysfs::function_dir(root_, bus);
        if (!dir) return std::unexpected(std::move(dir).error());
        const auto driver = vfio::bound_driver(*dir);
        if (driver && *driver != "vfio-pci")
            return fail(bus, " is bound to the driver ", *driver, "; to take it, unbind it and bind vfio-pci");
        auto lock = vfio::lock_config(*kernel_, *dir, bus);
        if (!lock) return std::unexpected(std::move(lock).error());
        const bool iommufd = vfio::iommufd_present(*kernel_, paths_);
        if (!iommufd && !kernel_->exists(paths_.dev("/dev/vfio/vfio")))
            return fail(bus,
                        ": VFIO is not available: there is no /dev/vfio/vfio or /dev/iommu (the kernel lacks "
                        "CONFIG_VFIO, or vfio-pci is not loaded)");
        if (!driver) return fail(bus, " is bound to no driver; to take it, bind vfio-pci");

        auto opened = open(bus, *dir, iommufd);
        if (!opened) return std::unexpected(std::move(opened).error());
        auto bars = vfio::read_bars(*dir);
        if (!bars) return fail(bus, ": ", bars.error());
        auto device = vfio::Device::open(kernel_, std::move(opened->device), bus, system_page());
        if (!device) return std::unexpected(std::move(device).error());
        auto armed = (*device)->arm_interrupts();
        if (!armed) return std::unexpected(std::move(armed).error());
        return std::make_unique<LocalFunction>(kernel_, bus, system_page(), std::move(*lock), std::move(opened->space),
                                               std::move(*device), *bars, held_, root_);
    }

private:
    // What sysfs says keeps the function's group from VFIO (groups.hpp), for the kernel's
    // refusal to name; empty where nothing does or the files cannot tell.
    std::string blocked(const std::string& bus) const {
        const auto group = iommu_group(Machine::at(root_), bus);
        return group && *group ? not_viable(**group, bus) : std::string();
    }

    Result<vfio::Opened> open(const std::string& bus, const fs::path& dir, bool iommufd) {
        if (iommufd) {
            if (auto cdev = vfio::vfio_cdev(dir)) return vfio::open_iommufd(*kernel_, paths_, bus, *cdev, blocked(bus));
        }
        auto group = vfio::iommu_group(dir, bus);
        if (!group) return std::unexpected(std::move(group).error());
        if (!*group)
            return fail(bus,
                        ": has no IOMMU group: the machine has no IOMMU and VFIO's no-IOMMU mode is off "
                        "(enable_unsafe_noiommu_mode)");
        return vfio::open_container(*kernel_, paths_, bus, **group, vfio::is_noiommu(root_, **group), blocked(bus));
    }

    fs::path root_;
    std::shared_ptr<Kernel> kernel_;
    vfio::Paths paths_;
    std::shared_ptr<Held> held_ = std::make_shared<Held>();
};

}  // namespace

std::shared_ptr<Ops> local_ops() {
    static const std::shared_ptr<Ops> ops = std::make_shared<LocalOps>("/", vfio::linux_kernel());
    return ops;
}

std::shared_ptr<Ops> local_ops(std::filesystem::path root, std::shared_ptr<vfio::Kernel> kernel) {
    return std::make_shared<LocalOps>(std::move(root), std::move(kernel));
}

}  // namespace rig::pci

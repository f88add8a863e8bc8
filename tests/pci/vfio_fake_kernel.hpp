// A kernel that plays VFIO's part for the local path's tests (rig/src/vfio_kernel.hpp is
// the seam). It answers the container, group, device and iommufd ioctls as linux/vfio.h and
// linux/iommufd.h describe them, including the argsz retry of INFO ioctls with
// capabilities and the EMSGSIZE retry of IOMMU_IOAS_IOVA_RANGES, and logs each ioctl by
// name. Files outside /dev (a fixture tree's config files) are opened and locked for
// real; /proc/self/pagemap gives made-up frame numbers; BAR mmaps are anonymous memory.
#pragma once

#include <fcntl.h>
#include <linux/vfio.h>
#include <sys/mman.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "vfio_iommufd_abi.hpp"
#include "vfio_kernel.hpp"

namespace rig::test {

using pci::vfio::Kernel;
using pci::vfio::Sys;

class FakeKernel final : public Kernel {
public:
    struct Region {
        std::uint32_t flags = 0;
        std::uint64_t size = 0;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> sparse;  // (offset, size); empty: no capability
        bool msix_mappable = false;
    };

    // What exists: device nodes by path (root-prefixed), and the function's answers.
    std::set<std::string> nodes;
    std::string bus;
    bool viable = true;
    int group_open_error = 0;
    int set_container_error = 0;  // VFIO_GROUP_SET_CONTAINER's errno (EPERM: the group's DMA is a driver's)
    int bind_error = 0;           // VFIO_DEVICE_BIND_IOMMUFD's errno
    int map_dma_error = 0;        // VFIO_IOMMU_MAP_DMA's errno
    // VFIO_DEVICE_FEATURE_DMA_BUF: unsupported (ENOTTY, a kernel before 6.19) unless set.
    bool exports_dmabuf = false;
    int map_file_error = 0;  // IOMMU_IOAS_MAP_FILE's errno
    std::uint32_t device_flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
    std::array<Region, 9> regions{};
    std::vector<std::uint8_t> config = std::vector<std::uint8_t>(4096, 0);
    std::vector<std::uint8_t> bar_registers = std::vector<std::uint8_t>(1 << 16, 0);  // BAR0's bytes for pread/pwrite
    unsigned msix_count = 4;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> iova_ranges{{0, 0xfedf'ffff}, {0xfef0'0000, 0xffff'ffff'ffff}};
    std::uint32_t mapped_frame_base = 0x1000;  // pagemap: frame of page p is base + p

    // What happened.
    std::vector<std::string> log;
    std::vector<std::vector<std::byte>> features;                    // VFIO_DEVICE_FEATURE arguments, as given
    std::map<std::uint64_t, int> mapped_files;                       // IOVA -> the fd IOAS_MAP_FILE mapped there
    std::map<std::uint64_t, std::uint64_t> dma;                      // IOVA -> bytes mapped
    std::vector<std::pair<std::uint64_t, std::uint64_t>> bar_mmaps;  // (fd offset, bytes)
    std::vector<int> armed_eventfds;
    std::set<int> fired;  // eventfds whose vector fired

    static constexpr std::uint64_t region_offset(unsigned index) { return std::uint64_t{index} << 40; }

    FakeKernel() {
        regions[VFIO_PCI_CONFIG_REGION_INDEX] = {
            VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE, 4096, {}, false};
    }

    std::size_t open_fds() const {
        std::lock_guard lock(mutex_);
        return kinds_.size();
    }
    void fire(unsigned vector) {
        std::lock_guard lock(mutex_);
        fired.insert(armed_eventfds.at(vector));
    }

    bool exists(const std::string& path) override { return nodes.contains(path) || real_->exists(path); }

    Sys<int> open(const std::string& path, int flags) override {
        std::lock_guard lock(mutex_);
        if (path.ends_with("/proc/self/pagemap")) return make(Kind::Pagemap);
        if (path.find("/dev/") == std::string::npos) return real_->open(path, flags);
        if (!nodes.contains(path)) return std::unexpected(ENOENT);
        if (path.ends_with("/dev/vfio/vfio")) return make(Kind::Container);
        if (path.ends_with("/dev/iommu")) return make(Kind::Iommufd);
        if (path.find("/dev/vfio/devices/") != std::string::npos) return make(Kind::Device);
        if (group_open_error) return std::unexpected(group_open_error);
        return make(Kind::Group);
    }

    void close(int fd) override {
        std::lock_guard lock(mutex_);
        if (kinds_.erase(fd) == 0) real_->close(fd);
    }

    Sys<int> ioctl(int fd, unsigned long request, void* arg) override {
        std::lock_guard lock(mutex_);
        auto kind = kinds_.find(fd);
        if (kind == kinds_.end()) return std::unexpected(EBADF);
        switch (request) {
        case VFIO_GET_API_VERSION: return note("GET_API_VERSION", VFIO_API_VERSION);
        case VFIO_CHECK_EXTENSION: {
            const auto type = reinterpret_cast<unsigned long>(arg);
            return note("CHECK_EXTENSION " + std::to_string(type),
                        type == VFIO_TYPE1v2_IOMMU || type == VFIO_NOIOMMU_IOMMU);
        }
        case VFIO_SET_IOMMU: return note("SET_IOMMU " + std::to_string(reinterpret_cast<unsigned long>(arg)), 0);
        case VFIO_GROUP_GET_STATUS: {
            auto* s = static_cast<vfio_group_status*>(arg);
            s->flags = viable ? VFIO_GROUP_FLAGS_VIABLE : 0;
            return note("GROUP_GET_STATUS", 0);
        }
        case VFIO_GROUP_SET_CONTAINER:
            if (set_container_error) return fail_with("GROUP_SET_CONTAINER", set_container_error);
            return note("GROUP_SET_CONTAINER", 0);
        case VFIO_GROUP_UNSET_CONTAINER: return note("GROUP_UNSET_CONTAINER", 0);
        case VFIO_GROUP_GET_DEVICE_FD:
            if (std::string(static_cast<const char*>(arg)) != bus) return std::unexpected(ENODEV);
            note("GROUP_GET_DEVICE_FD", 0);
            return make(Kind::Device);
        case VFIO_DEVICE_GET_INFO: {
            auto* info = static_cast<vfio_device_info*>(arg);
            info->flags = device_flags;
            info->num_regions = 9;
            info->num_irqs = 5;
            return note("DEVICE_GET_INFO", 0);
        }
        case VFIO_DEVICE_GET_REGION_INFO: return region_info(static_cast<vfio_region_info*>(arg));
        case VFIO_DEVICE_GET_IRQ_INFO: {
            auto* info = static_cast<vfio_irq_info*>(arg);
            info->flags = VFIO_IRQ_INFO_EVENTFD;
            info->count = info->index == VFIO_PCI_MSIX_IRQ_INDEX ? msix_count : 0;
            return note("DEVICE_GET_IRQ_INFO", 0);
        }
        case VFIO_DEVICE_SET_IRQS: {
            auto* set = static_cast<vfio_irq_set*>(arg);
            armed_eventfds.clear();
            if (set->flags & VFIO_IRQ_SET_DATA_EVENTFD)
                for (std::uint32_t i = 0; i < set->count; ++i) {
                    std::int32_t efd = 0;
                    std::memcpy(&efd, reinterpret_cast<std::byte*>(set) + sizeof(vfio_irq_set) + 4 * i, 4);
                    armed_eventfds.push_back(efd);
                }
            return note("DEVICE_SET_IRQS " + std::to_string(set->count), 0);
        }
        case VFIO_DEVICE_RESET: return note("DEVICE_RESET", 0);
        case VFIO_IOMMU_GET_INFO: return iommu_info(static_cast<vfio_iommu_type1_info*>(arg));
        case VFIO_DEVICE_FEATURE: {
            const auto* head = static_cast<const vfio_device_feature*>(arg);
            const auto* bytes = static_cast<const std::byte*>(arg);
            features.emplace_back(bytes, bytes + head->argsz);
            if (!exports_dmabuf) return fail_with("DEVICE_FEATURE", ENOTTY);
            note("DEVICE_FEATURE", 0);
            return make(Kind::Dmabuf);
        }
        case VFIO_IOMMU_MAP_DMA: {
            auto* m = static_cast<vfio_iommu_type1_dma_map*>(arg);
            if (map_dma_error) return fail_with("IOMMU_MAP_DMA", map_dma_error);
            dma[m->iova] = m->size;
            return note("IOMMU_MAP_DMA", 0);
        }
        case VFIO_IOMMU_UNMAP_DMA: {
            auto* u = static_cast<vfio_iommu_type1_dma_unmap*>(arg);
            auto it = dma.find(u->iova);
            u->size = it == dma.end() ? 0 : it->second;
            if (it != dma.end()) dma.erase(it);
            return note("IOMMU_UNMAP_DMA", 0);
        }
        default: break;
        }
        namespace abi = pci::vfio::abi;
        if (request == abi::device_bind_iommufd) {
            if (bind_error) return fail_with("DEVICE_BIND_IOMMUFD", bind_error);
            return note("DEVICE_BIND_IOMMUFD", 0);
        }
        if (request == abi::device_attach_iommufd_pt) return note("DEVICE_ATTACH_IOMMUFD_PT", 0);
        if (request == abi::ioas_alloc) {
            static_cast<abi::iommu_ioas_alloc*>(arg)->out_ioas_id = 7;
            return note("IOAS_ALLOC", 0);
        }
        if (request == abi::ioas_iova_ranges) {
            auto* q = static_cast<abi::iommu_ioas_iova_ranges*>(arg);
            note("IOAS_IOVA_RANGES " + std::to_string(q->num_iovas), 0);
            const bool room = q->num_iovas >= iova_ranges.size();
            q->num_iovas = static_cast<std::uint32_t>(iova_ranges.size());
            if (!room) return std::unexpected(EMSGSIZE);
            auto* out = reinterpret_cast<abi::iommu_iova_range*>(static_cast<std::uintptr_t>(q->allowed_iovas));
            for (std::size_t i = 0; i < iova_ranges.size(); ++i) out[i] = {iova_ranges[i].first, iova_ranges[i].second};
            return 0;
        }
        if (request == abi::ioas_map) {
            auto* m = static_cast<abi::iommu_ioas_map*>(arg);
            if (!(m->flags & abi::map_fixed_iova) || m->ioas_id != 7) return std::unexpected(EINVAL);
            dma[m->iova] = m->length;
            return note("IOAS_MAP", 0);
        }
        if (request == abi::ioas_map_file) {
            auto* m = static_cast<abi::iommu_ioas_map_file*>(arg);
            if (map_file_error) return fail_with("IOAS_MAP_FILE", map_file_error);
            if (!(m->flags & abi::map_fixed_iova) || m->ioas_id != 7 || !kinds_.contains(m->fd) ||
                kinds_.at(m->fd) != Kind::Dmabuf)
                return std::unexpected(EINVAL);
            dma[m->iova] = m->length;
            mapped_files[m->iova] = m->fd;
            return note("IOAS_MAP_FILE", 0);
        }
        if (request == abi::ioas_unmap) {
            auto* u = static_cast<abi::iommu_ioas_unmap*>(arg);
            dma.erase(u->iova);
            return note("IOAS_UNMAP", 0);
        }
        return std::unexpected(ENOTTY);
    }

    Sys<std::byte*> mmap(std::byte* address, std::size_t bytes, int protection, int flags, int fd,
                         std::uint64_t offset) override {
        {
            std::lock_guard lock(mutex_);
            if (fd >= 0 && kinds_.contains(fd)) {
                bar_mmaps.emplace_back(offset, bytes);
                flags = (flags & ~MAP_SHARED) | MAP_PRIVATE | MAP_ANONYMOUS;
                fd = -1;
                offset = 0;
            }
        }
        return real_->mmap(address, bytes, protection, flags, fd, offset);
    }
    void munmap(std::byte* address, std::size_t bytes) override { real_->munmap(address, bytes); }

    Sys<std::size_t> pread(int fd, std::span<std::byte> out, std::uint64_t offset) override {
        std::lock_guard lock(mutex_);
        auto kind = kinds_.find(fd);
        if (kind == kinds_.end()) return std::unexpected(EBADF);
        if (kind->second == Kind::Pagemap) {
            const std::uint64_t entry = (std::uint64_t{1} << 63) | (mapped_frame_base + offset / 8);
            std::memcpy(out.data(), &entry, std::min<std::size_t>(8, out.size()));
            return out.size();
        }
        auto* bytes = region_bytes(offset, out.size());
        if (!bytes) return std::unexpected(EINVAL);
        std::memcpy(out.data(), bytes, out.size());
        log.push_back("pread " + std::to_string(offset) + " " + std::to_string(out.size()));
        return out.size();
    }

    Sys<std::size_t> pwrite(int fd, std::span<const std::byte> in, std::uint64_t offset) override {
        std::lock_guard lock(mutex_);
        if (!kinds_.contains(fd)) return std::unexpected(EBADF);
        auto* bytes = region_bytes(offset, in.size());
        if (!bytes) return std::unexpected(EINVAL);
        std::memcpy(bytes, in.data(), in.size());
        log.push_back("pwrite " + std::to_string(offset) + " " + std::to_string(in.size()));
        return in.size();
    }

    Sys<void> lock(int fd) override { return real_->lock(fd); }

    Sys<int> eventfd() override {
        std::lock_guard lock(mutex_);
        return make(Kind::Eventfd);
    }

    Sys<bool> wait(int fd, std::chrono::nanoseconds) override {
        std::lock_guard lock(mutex_);
        return fired.erase(fd) > 0;
    }

private:
    enum class Kind { Container, Group, Device, Iommufd, Eventfd, Pagemap, Dmabuf };

    int make(Kind kind) {
        const int fd = next_++;
        kinds_[fd] = kind;
        return fd;
    }
    Sys<int> note(std::string what, int value) {
        log.push_back(std::move(what));
        return value;
    }
    Sys<int> fail_with(std::string what, int error) {
        log.push_back(std::move(what));
        return std::unexpected(error);
    }

    std::uint8_t* region_bytes(std::uint64_t offset, std::size_t n) {
        const std::uint64_t config_at = region_offset(VFIO_PCI_CONFIG_REGION_INDEX);
        if (offset >= config_at && offset + n <= config_at + config.size()) return config.data() + (offset - config_at);
        if (offset + n <= bar_registers.size()) return bar_registers.data() + offset;  // BAR0 at fd offset 0
        return nullptr;
    }

    // The argsz retry: with capabilities, an answer too small for them says how big.
    Sys<int> region_info(vfio_region_info* info) {
        const Region& r = regions.at(info->index);
        std::vector<std::byte> caps;
        const auto add = [&](std::uint16_t id, std::span<const std::byte> body) {
            const std::size_t at = caps.size();
            vfio_info_cap_header header{id, 1, 0};
            caps.resize(at + sizeof header + body.size());
            std::memcpy(caps.data() + at + sizeof header, body.data(), body.size());
            return std::pair(at, header);
        };
        std::vector<std::pair<std::size_t, vfio_info_cap_header>> headers;
        if (!r.sparse.empty()) {
            std::vector<std::byte> body(8 + 16 * r.sparse.size());
            const std::uint32_t n = static_cast<std::uint32_t>(r.sparse.size());
            std::memcpy(body.data(), &n, 4);
            for (std::size_t i = 0; i < r.sparse.size(); ++i) {
                std::memcpy(body.data() + 8 + 16 * i, &r.sparse[i].first, 8);
                std::memcpy(body.data() + 16 + 16 * i, &r.sparse[i].second, 8);
            }
            headers.push_back(add(VFIO_REGION_INFO_CAP_SPARSE_MMAP, body));
        }
        if (r.msix_mappable) headers.push_back(add(VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, {}));
        const std::uint32_t needed = static_cast<std::uint32_t>(sizeof(vfio_region_info) + caps.size());
        info->flags = r.flags | (caps.empty() ? 0 : VFIO_REGION_INFO_FLAG_CAPS);
        info->size = r.size;
        info->offset = region_offset(info->index);
        info->cap_offset = 0;
        log.push_back("DEVICE_GET_REGION_INFO " + std::to_string(info->index) + " " + std::to_string(info->argsz));
        if (caps.empty()) return 0;
        if (info->argsz < needed) {
            info->argsz = needed;
            return 0;
        }
        // Chain the headers at their offsets from the start of the answer.
        for (std::size_t i = 0; i < headers.size(); ++i) {
            vfio_info_cap_header h = headers[i].second;
            h.next = i + 1 < headers.size()
                         ? static_cast<std::uint32_t>(sizeof(vfio_region_info) + headers[i + 1].first)
                         : 0;
            std::memcpy(caps.data() + headers[i].first, &h, sizeof h);
        }
        info->cap_offset = sizeof(vfio_region_info);
        std::memcpy(reinterpret_cast<std::byte*>(info) + sizeof(vfio_region_info), caps.data(), caps.size());
        return 0;
    }

    Sys<int> iommu_info(vfio_iommu_type1_info* info) {
        const std::uint32_t needed =
            static_cast<std::uint32_t>(sizeof(vfio_iommu_type1_info) + 16 + 16 * iova_ranges.size());
        info->flags = VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS;
        info->iova_pgsizes = 0x40201000;
        log.push_back("IOMMU_GET_INFO " + std::to_string(info->argsz));
        if (info->argsz < needed) {
            info->argsz = needed;
            info->cap_offset = 0;
            return 0;
        }
        auto* base = reinterpret_cast<std::byte*>(info);
        vfio_iommu_type1_info_cap_iova_range head{};
        head.header = {VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE, 1, 0};
        head.nr_iovas = static_cast<std::uint32_t>(iova_ranges.size());
        std::memcpy(base + sizeof(vfio_iommu_type1_info), &head, sizeof head);
        for (std::size_t i = 0; i < iova_ranges.size(); ++i) {
            vfio_iova_range range{iova_ranges[i].first, iova_ranges[i].second};
            std::memcpy(base + sizeof(vfio_iommu_type1_info) + sizeof head + 16 * i, &range, sizeof range);
        }
        info->cap_offset = sizeof(vfio_iommu_type1_info);
        return 0;
    }

    mutable std::mutex mutex_;
    std::shared_ptr<Kernel> real_ = pci::vfio::linux_kernel();
    std::map<int, Kind> kinds_;
    int next_ = 100000;
};

}  // namespace rig::test

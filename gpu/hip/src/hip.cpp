// The HIP backend (rig/gpu/hip.hpp): BOs in CPU-visible VRAM through libdrm's amdgpu
// interface, at Space addresses of the render node's GPU virtual memory; HIP's kernels
// and copies on HIP's import of each BO's dma-buf; runs from /proc/self/pagemap.
//
// alloc, in order (each step undone by ~Memory in reverse):
//   1. the BAR check: a BO larger than CPU-visible VRAM (amdgpu_query_heap_info with
//      AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED) can never be reached through the BAR;
//   2. amdgpu_bo_alloc in VRAM, CPU access required (-ENOMEM: out of memory);
//   3. amdgpu_bo_va_op(MAP) at the Space address: the Space chose it, not libdrm's VA
//      manager; the kernel refuses an address outside the VM or already mapped;
//   4. amdgpu_bo_cpu_map: the process's view through the BAR, for the page map;
//   5. amdgpu_bo_export as a dma-buf, 6. imported into HIP (hipImportExternalMemory),
//      which gives the device pointer kernels and copies use.
// A peer's map imports the owner's dma-buf into its own render node (amdgpu_bo_import),
// maps it at the same address there, and imports it into HIP for its device.
#include "rig/gpu/hip.hpp"

#include <fcntl.h>
#include <hip/hip_runtime_api.h>
#include <libdrm/amdgpu.h>
#include <libdrm/amdgpu_drm.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "rig/gpu/backend.hpp"
#include "rig/pci/window.hpp"
#include "rig/text.hpp"

namespace rig::gpu::hip {
namespace {

constexpr std::uint64_t page = 4096;

std::string hex(std::uint64_t address) { return text::hex(address); }
std::string describe(hipError_t status) {
    return std::string(hipGetErrorName(status)) + " (" + hipGetErrorString(status) + ")";
}
// libdrm returns a negative errno.
std::string describe_drm(int status) { return std::strerror(-status); }

// An open render node and libdrm's device on it.
struct Node {
    int fd = -1;
    amdgpu_device_handle device = nullptr;
    std::string path;
    Node() = default;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    ~Node() {
        if (device != nullptr) amdgpu_device_deinitialize(device);
        if (fd >= 0) ::close(fd);
    }
};

// A dma-buf imported into HIP on one device: the pointer its kernels and copies use.
struct Imported {
    hipExternalMemory_t external = nullptr;
    std::byte* pointer = nullptr;
};

class Device;

// A BO this device allocated, mapped at its Space address.
class Memory final : public Allocation {
public:
    Memory(std::shared_ptr<const Device> device, std::uint64_t address, std::uint64_t bytes)
        : device_(std::move(device)), address_(address), bytes_(bytes) {}
    ~Memory() override;
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;

    Result<std::vector<pci::Run>> runs(std::uint64_t offset, std::uint64_t bytes) const override;
    Result<Dmabuf> dmabuf(std::uint64_t offset, std::uint64_t bytes) const override;
    // The runs of the whole BO where the page map gives them; none where it does not,
    // and then no NIC region can cover it either.
    std::vector<pci::Run> reachable() const override {
        auto r = runs(0, bytes_);
        return r ? std::move(*r) : std::vector<pci::Run>{};
    }
    Result<Pointer> pointer() const override;

    const Device& device() const { return *device_; }
    std::uint64_t address() const { return address_; }

    amdgpu_bo_handle bo = nullptr;
    bool va_mapped = false;
    void* cpu = nullptr;
    int dmabuf_fd = -1;  // the BO's dma-buf, kept for peers to import
    Imported hip;

private:
    const std::shared_ptr<const Device> device_;  // kept while the memory lives, mapped by peers included
    std::uint64_t address_, bytes_;
};

// A peer's BO imported into this device's render node and HIP, at the same address.
class Mapping final : public Allocation {
public:
    Mapping(std::shared_ptr<const Device> device, std::shared_ptr<Allocation> owner, const Memory& memory,
            std::uint64_t bytes)
        : device_(std::move(device)), owner_(std::move(owner)), memory_(memory), bytes_(bytes) {}
    ~Mapping() override;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;

    Result<std::vector<pci::Run>> runs(std::uint64_t offset, std::uint64_t bytes) const override {
        return owner_->runs(offset, bytes);
    }
    Result<Dmabuf> dmabuf(std::uint64_t offset, std::uint64_t bytes) const override {
        return owner_->dmabuf(offset, bytes);
    }
    std::vector<pci::Run> reachable() const override { return owner_->reachable(); }
    Result<Pointer> pointer() const override;
    amdgpu_bo_handle bo = nullptr;
    bool va_mapped = false;
    Imported hip;

private:
    const std::shared_ptr<const Device> device_;
    std::shared_ptr<Allocation> owner_;
    const Memory& memory_;  // *owner_
    std::uint64_t bytes_;
};

std::byte* pointer_of(const Allocation& a) {
    if (const auto* m = dynamic_cast<const Memory*>(&a)) return m->hip.pointer;
    return static_cast<const Mapping&>(a).hip.pointer;
}

void forget(int ordinal, Imported& imported) {
    if (imported.external == nullptr) return;
    (void)hipSetDevice(ordinal);
    (void)hipDestroyExternalMemory(imported.external);  // unmaps its buffers too
    imported = {};
}

// Pinned host memory of the HIP runtime (hipHostMalloc, portable: every device of the process
// reaches it), which copies reach through the process (no runs). It keeps its device open.
class Pinned final : public HostAllocation {
public:
    Pinned(std::shared_ptr<const Device> device, std::byte* at, std::uint64_t bytes)
        : HostAllocation(HostBuffer::of(std::span(at, bytes))), device_(std::move(device)) {}
    ~Pinned() override { (void)hipHostFree(buffer.window.data()); }

private:
    const std::shared_ptr<const Device> device_;
};

class Device final : public Backend, public std::enable_shared_from_this<Device> {
public:
    Device(int number, std::string name, std::string bus, std::unique_ptr<Node> node)
        : Backend(std::move(name), std::move(bus)), ordinal(number), node_(std::move(node)) {}

    const int ordinal;
    amdgpu_device_handle drm() const { return node_->device; }

    std::uint64_t granularity() const override { return page; }

    std::unexpected<std::string> failed(const std::string& what, std::uint64_t bytes, hipError_t status) const {
        return fail(label(), ": ", what, " ", text::bytes(bytes), ": ", describe(status));
    }
    std::unexpected<std::string> failed_drm(const std::string& what, std::uint64_t bytes, int status) const {
        return fail(label(), ": ", what, " ", text::bytes(bytes), " (", node_->path, "): ", describe_drm(status));
    }

    // The dma-buf `fd` (a duplicate of it, which HIP owns from here) imported into HIP.
    Result<Imported> import(int fd, std::uint64_t bytes) const {
        if (hipError_t s = hipSetDevice(ordinal); s != hipSuccess) return failed("could not import", bytes, s);
        const int owned = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (owned < 0) return fail(label(), ": could not import ", text::bytes(bytes), ": dup: ", std::strerror(errno));
        hipExternalMemoryHandleDesc desc{};
        desc.type = hipExternalMemoryHandleTypeOpaqueFd;
        desc.handle.fd = owned;
        desc.size = bytes;
        Imported imported;
        if (hipError_t s = hipImportExternalMemory(&imported.external, &desc); s != hipSuccess) {
            ::close(owned);
            return failed("HIP would not import the dma-buf of", bytes, s);
        }
        hipExternalMemoryBufferDesc buffer{};
        buffer.size = bytes;
        void* pointer = nullptr;
        if (hipError_t s = hipExternalMemoryGetMappedBuffer(&pointer, imported.external, &buffer); s != hipSuccess) {
            forget(ordinal, imported);
            return failed("HIP would not map the dma-buf of", bytes, s);
        }
        imported.pointer = static_cast<std::byte*>(pointer);
        return imported;
    }

    Result<void> map_at(amdgpu_bo_handle bo, std::uint64_t address, std::uint64_t bytes) const {
        if (int r = amdgpu_bo_va_op(bo, 0, bytes, address, 0, AMDGPU_VA_OP_MAP); r != 0)
            return failed_drm("the driver would not map the Space address " + hex(address) + " for", bytes, r);
        return {};
    }

    Result<std::shared_ptr<Allocation>> alloc(std::int64_t at, std::uint64_t bytes) override {
        const auto address = static_cast<std::uint64_t>(at);
        amdgpu_heap_info visible{};
        if (int r =
                amdgpu_query_heap_info(drm(), AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED, &visible);
            r != 0)
            return failed_drm("could not read the CPU-visible VRAM for", bytes, r);
        if (bytes > visible.heap_size)
            return fail(label(), ": the BAR reaches ", text::bytes(visible.heap_size), " of VRAM, too little for ",
                        text::bytes(bytes));
        auto memory = std::make_shared<Memory>(shared_from_this(), address, bytes);
        amdgpu_bo_alloc_request request{};
        request.alloc_size = bytes;
        request.phys_alignment = page;
        request.preferred_heap = AMDGPU_GEM_DOMAIN_VRAM;
        request.flags = AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
        if (int r = amdgpu_bo_alloc(drm(), &request, &memory->bo); r != 0) {
            memory->bo = nullptr;
            if (r != -ENOMEM) return failed_drm("could not allocate", bytes, r);
            return fail(label(), ": out of memory for ", text::bytes(bytes), " (", text::bytes(visible.heap_usage),
                        " of ", text::bytes(visible.heap_size), " of CPU-visible VRAM in use)");
        }
        if (auto r = map_at(memory->bo, address, bytes); !r) return std::unexpected(std::move(r).error());
        memory->va_mapped = true;
        if (int r = amdgpu_bo_cpu_map(memory->bo, &memory->cpu); r != 0) {
            memory->cpu = nullptr;
            return failed_drm("could not map through the BAR", bytes, r);
        }
        std::uint32_t fd = 0;
        if (int r = amdgpu_bo_export(memory->bo, amdgpu_bo_handle_type_dma_buf_fd, &fd); r != 0)
            return failed_drm("could not export a dma-buf of", bytes, r);
        memory->dmabuf_fd = static_cast<int>(fd);
        auto imported = import(memory->dmabuf_fd, bytes);
        if (!imported) return std::unexpected(std::move(imported).error());
        memory->hip = *imported;
        return memory;
    }

    Result<std::shared_ptr<Allocation>> map(const std::shared_ptr<Allocation>& peer, std::int64_t at,
                                            std::uint64_t bytes) override {
        const auto address = static_cast<std::uint64_t>(at);
        const auto* memory = dynamic_cast<const Memory*>(peer.get());
        if (memory == nullptr)
            throw std::invalid_argument("hip: " + label() + " cannot map memory of another kind of GPU at " +
                                        hex(address));
        auto mapping = std::make_shared<Mapping>(shared_from_this(), peer, *memory, bytes);
        amdgpu_bo_import_result imported_bo{};
        if (int r = amdgpu_bo_import(drm(), amdgpu_bo_handle_type_dma_buf_fd,
                                     static_cast<std::uint32_t>(memory->dmabuf_fd), &imported_bo);
            r != 0)
            return failed_drm("could not import the peer's " + memory->device().label() + " BO of", bytes, r);
        mapping->bo = imported_bo.buf_handle;
        if (auto r = map_at(mapping->bo, address, bytes); !r) return std::unexpected(std::move(r).error());
        mapping->va_mapped = true;
        auto imported = import(memory->dmabuf_fd, bytes);
        if (!imported) return std::unexpected(std::move(imported).error());
        mapping->hip = *imported;
        return mapping;
    }

    Result<void> copy(void* to, const void* from, std::uint64_t n, hipMemcpyKind kind, const char* what) const {
        if (hipError_t s = hipSetDevice(ordinal); s != hipSuccess) return failed(what, n, s);
        if (hipError_t s = hipMemcpy(to, from, n, kind); s != hipSuccess) return failed(what, n, s);
        return {};
    }

    Result<std::shared_ptr<HostAllocation>> host(std::uint64_t bytes) override {
        if (hipError_t s = hipSetDevice(ordinal); s != hipSuccess)
            return failed("could not allocate host memory of", bytes, s);
        void* at = nullptr;
        if (hipError_t s = hipHostMalloc(&at, bytes, hipHostMallocPortable); s != hipSuccess)
            return failed("could not allocate pinned host memory of", bytes, s);
        return std::make_shared<Pinned>(shared_from_this(), static_cast<std::byte*>(at), bytes);
    }

    Result<void> upload(Allocation& memory, std::uint64_t offset, std::span<const std::byte> bytes) override {
        return copy(pointer_of(memory) + offset, bytes.data(), bytes.size(), hipMemcpyHostToDevice, "could not upload");
    }
    Result<void> download(Allocation& memory, std::uint64_t offset, std::span<std::byte> out) override {
        return copy(out.data(), pointer_of(memory) + offset, out.size(), hipMemcpyDeviceToHost, "could not download");
    }

    Result<void> copy_to_host(Allocation& memory, std::uint64_t offset, const HostBuffer& host,
                              std::uint64_t host_offset, std::uint64_t n) override {
        auto to = process_bytes(host, host_offset, n);
        if (!to) return std::unexpected(std::move(to).error());
        return copy(*to, pointer_of(memory) + offset, n, hipMemcpyDeviceToHost, "could not copy to host memory");
    }
    Result<void> copy_from_host(const HostBuffer& host, std::uint64_t host_offset, Allocation& memory,
                                std::uint64_t offset, std::uint64_t n) override {
        auto from = process_bytes(host, host_offset, n);
        if (!from) return std::unexpected(std::move(from).error());
        return copy(pointer_of(memory) + offset, *from, n, hipMemcpyHostToDevice, "could not copy from host memory");
    }

    Result<void> fill(Allocation& memory, std::uint64_t offset, std::uint64_t n, std::uint64_t seed) override {
        const auto address = reinterpret_cast<std::uint64_t>(pointer_of(memory) + offset);
        const kernels::Status s = kernels::fill(ordinal, address, n, seed);
        if (s.code != 0) return fail(label(), ": could not fill ", text::bytes(n), ": ", s.message);
        return {};
    }
    Result<std::uint64_t> checksum(Allocation& memory, std::uint64_t offset, std::uint64_t n) override {
        const auto address = reinterpret_cast<std::uint64_t>(pointer_of(memory) + offset);
        std::uint64_t sum = 0;
        const kernels::Status s = kernels::checksum(ordinal, address, n, &sum);
        if (s.code != 0) return fail(label(), ": could not checksum ", text::bytes(n), ": ", s.message);
        return sum;
    }

private:
    std::unique_ptr<Node> node_;
};

Memory::~Memory() {
    forget(device_->ordinal, hip);
    if (dmabuf_fd >= 0) ::close(dmabuf_fd);
    if (cpu != nullptr) amdgpu_bo_cpu_unmap(bo);
    if (va_mapped) amdgpu_bo_va_op(bo, 0, bytes_, address_, 0, AMDGPU_VA_OP_UNMAP);
    if (bo != nullptr) amdgpu_bo_free(bo);
}

// HIP's pointer to the BO it imported (hipExternalMemoryGetMappedBuffer), on the GPU that
// imported it.
Result<Pointer> Memory::pointer() const { return Pointer{Pointer::Device::Rocm, device_->ordinal, hip.pointer}; }
Result<Pointer> Mapping::pointer() const { return Pointer{Pointer::Device::Rocm, device_->ordinal, hip.pointer}; }

Mapping::~Mapping() {
    forget(device_->ordinal, hip);
    if (va_mapped) amdgpu_bo_va_op(bo, 0, bytes_, memory_.address(), 0, AMDGPU_VA_OP_UNMAP);
    if (bo != nullptr) amdgpu_bo_free(bo);
}

// The bus address of each page of the BO's CPU mapping, from the page map: entry i of
// /proc/self/pagemap is 8 bytes for virtual page i, bit 63 "present", bits 0-54 the
// frame number, which reads 0 without CAP_SYS_ADMIN (Documentation/admin-guide/mm/pagemap.rst).
Result<std::vector<pci::Run>> Memory::runs(std::uint64_t offset, std::uint64_t bytes) const {
    // A BAR page has a page-table entry only once touched: read a byte of each through a Window.
    const pci::Window view = pci::Window::mapped(static_cast<std::byte*>(cpu), bytes_);
    for (std::uint64_t at = offset; at < offset + bytes; at += page) (void)view.read8(at);
    const int map = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (map < 0)
        return fail(device_->label(), ": cannot read /proc/self/pagemap for the runs of ", text::bytes(bytes), ": ",
                    std::strerror(errno));
    std::vector<std::uint64_t> entries(bytes / page);
    const auto first = (reinterpret_cast<std::uintptr_t>(cpu) + offset) / page;
    const auto want = static_cast<ssize_t>(entries.size() * sizeof(std::uint64_t));
    const ssize_t got =
        ::pread(map, entries.data(), static_cast<std::size_t>(want), static_cast<off_t>(first * sizeof(std::uint64_t)));
    const int error = errno;
    ::close(map);
    if (got != want)
        return fail(device_->label(), ": cannot read /proc/self/pagemap for the runs of ", text::bytes(bytes), ": ",
                    std::strerror(error));
    std::vector<pci::Run> runs;
    for (std::uint64_t i = 0; i < entries.size(); ++i) {
        const std::uint64_t frame = entries[i] & ((std::uint64_t{1} << 55) - 1);
        if ((entries[i] >> 63) == 0)
            return fail(device_->label(), ": page ", std::to_string(i), " of the ", text::bytes(bytes), " at ",
                        hex(address_ + offset), " is not present in the BAR mapping");
        if (frame == 0)
            return fail(
                device_->label(),
                ": this process may not read physical frame numbers (/proc/self/pagemap needs CAP_SYS_ADMIN), so "
                "the bus addresses of ",
                text::bytes(bytes), " at ", hex(address_ + offset), " are unknown: use Memory::dmabuf");
        const pci::DmaAddress at{frame * page};
        if (!runs.empty() && runs.back().address + runs.back().bytes == at) runs.back().bytes += page;
        else runs.push_back({at, page});
    }
    return runs;
}

Result<Dmabuf> Memory::dmabuf(std::uint64_t offset, std::uint64_t) const {
    const int fd = ::fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return fail(device_->label(), ": could not duplicate the dma-buf of ", text::bytes(bytes_), ": ",
                    std::strerror(errno));
    return Dmabuf(fd, bytes_, offset);  // the whole BO: amdgpu exports no part of one
}

// The render node of the GPU at `bus`: /sys/bus/pci/devices/<bus>/drm/renderD<n>.
Result<std::string> render_node(const std::string& bus) {
    std::error_code error;
    const std::filesystem::path drm = "/sys/bus/pci/devices/" + bus + "/drm";
    for (const auto& entry : std::filesystem::directory_iterator(drm, error)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("renderD", 0) == 0) return "/dev/dri/" + name;
    }
    return fail("HIP: ", bus, " has no DRM render node under ", drm.string(),
                error ? ": " + error.message() : std::string());
}

}  // namespace

Result<int> count() {
    int n = 0;
    const hipError_t s = hipGetDeviceCount(&n);
    if (s == hipErrorNoDevice && !std::filesystem::exists("/dev/kfd"))
        return fail("HIP: no AMD GPU driver: /dev/kfd is missing (", describe(s), ")");
    if (s == hipErrorNoDevice) return 0;
    if (s != hipSuccess) return fail("HIP: cannot count the GPUs: ", describe(s));
    return n;
}

Result<Gpu> open(int ordinal, std::shared_ptr<Space> space) {
    if (!space) throw std::invalid_argument("hip::open: no Space");
    if (ordinal < 0) throw std::invalid_argument("hip::open: GPU " + std::to_string(ordinal));
    auto n = count();
    if (!n) return std::unexpected(std::move(n).error());
    if (ordinal >= *n) return fail("HIP: no GPU ", std::to_string(ordinal), " (", std::to_string(*n), " found)");

    hipDeviceProp_t properties{};
    if (hipError_t s = hipGetDeviceProperties(&properties, ordinal); s != hipSuccess)
        return fail("HIP: GPU ", std::to_string(ordinal), ": ", describe(s));
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", static_cast<unsigned>(properties.pciDomainID),
                  static_cast<unsigned>(properties.pciBusID), static_cast<unsigned>(properties.pciDeviceID));
    auto path = render_node(bus);
    if (!path) return std::unexpected(std::move(path).error());
    auto node = std::make_unique<Node>();
    node->path = *path;
    node->fd = ::open(path->c_str(), O_RDWR | O_CLOEXEC);
    if (node->fd < 0) return fail("HIP: ", bus, ": cannot open ", *path, ": ", std::strerror(errno));
    std::uint32_t major = 0, minor = 0;
    if (int r = amdgpu_device_initialize(node->fd, &major, &minor, &node->device); r != 0) {
        node->device = nullptr;
        return fail("HIP: ", bus, ": libdrm's amdgpu would not open ", *path, ": ", describe_drm(r));
    }
    auto backend = std::make_shared<Device>(ordinal, properties.name, bus, std::move(node));
    return Gpu(std::move(backend), std::move(space));
}

}  // namespace rig::gpu::hip

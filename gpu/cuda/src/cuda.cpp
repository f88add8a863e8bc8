// The CUDA backend (rig/gpu/cuda.hpp): memory at Space addresses through the driver API's
// virtual memory management (CUDA Driver API §6.14 "Virtual Memory Management"), copies
// through the runtime, fill and checksum in kernels.cu.
//
// alloc, in the order the driver requires (cuMemMap needs a reserved range, access is
// granted on a mapped one):
//   1. cuMemAddressReserve(address) — the address is only a hint; a reservation CUDA
//      placed elsewhere is given back and the allocation refused, since an address must
//      mean the same memory on every GPU of the Space;
//   2. cuMemCreate: pinned memory on this device, GPUDirect RDMA capable where the device
//      says so (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED);
//   3. cuMemMap the whole range, 4. cuMemSetAccess read-write for this device.
// The destructor undoes them in reverse. A peer's map is step 4 for the peer's device.
#include "rig/gpu/cuda.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "driver.hpp"
#include "kernels.hpp"
#include "rig/gpu/backend.hpp"
#include "rig/text.hpp"

namespace rig::gpu::cuda {
namespace {

std::string hex(std::int64_t address) { return text::hex(static_cast<std::uint64_t>(address)); }

CUmemAccessDesc access(int ordinal, CUmemAccess_flags flags) {
    CUmemAccessDesc desc{};
    desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc.location.id = ordinal;
    desc.flags = flags;
    return desc;
}

// The size of BAR1, the BAR through which peers reach an NVIDIA GPU's memory, from the
// PCI resource table in sysfs (line i is BAR i: start, end, flags); nullopt where unread.
std::optional<std::uint64_t> bar1_bytes(const std::string& bus) {
    std::ifstream resource("/sys/bus/pci/devices/" + bus + "/resource");
    std::string line;
    if (!std::getline(resource, line) || !std::getline(resource, line)) return std::nullopt;
    std::uint64_t start = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 " %" SCNx64, &start, &end) != 2 || end <= start) return std::nullopt;
    return end - start + 1;
}

class Device;

// Memory this device created, mapped at its Space address.
class Memory final : public Allocation {
public:
    Memory(std::shared_ptr<const Device> device, CUdeviceptr address, std::uint64_t bytes)
        : device_(std::move(device)), address_(address), bytes_(bytes) {}
    ~Memory() override;
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;

    Result<std::vector<pci::Run>> runs(std::uint64_t offset, std::uint64_t bytes) const override;
    Result<Dmabuf> dmabuf(std::uint64_t offset, std::uint64_t bytes) const override;
    // No runs ever (runs says why), so no region of a NIC driven from user space covers it.
    std::vector<pci::Run> reachable() const override { return {}; }
    Result<Pointer> pointer() const override;

    CUdeviceptr address() const { return address_; }
    const Device& device() const { return *device_; }

    CUmemGenericAllocationHandle handle = 0;
    bool created = false, mapped = false;

private:
    const std::shared_ptr<const Device> device_;  // kept while the memory lives, mapped by peers included
    CUdeviceptr address_;
    std::uint64_t bytes_;
};

// A peer's Memory this device was granted access to.
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
    CUdeviceptr address() const { return memory_.address(); }

private:
    const std::shared_ptr<const Device> device_;
    std::shared_ptr<Allocation> owner_;
    const Memory& memory_;  // *owner_
    std::uint64_t bytes_;
};

CUdeviceptr address_of(const Allocation& a) {
    if (const auto* m = dynamic_cast<const Memory*>(&a)) return m->address();
    return static_cast<const Mapping&>(a).address();
}

// Pinned host memory of the CUDA runtime (cudaHostAlloc, portable: every device of the process
// reaches it), which copies reach through the process (no runs). It keeps its device open.
class Pinned final : public HostAllocation {
public:
    Pinned(std::shared_ptr<const Device> device, std::byte* at, std::uint64_t bytes)
        : HostAllocation(HostBuffer::of(std::span(at, bytes))), device_(std::move(device)) {}
    ~Pinned() override { (void)cudaFreeHost(buffer.window.data()); }

private:
    const std::shared_ptr<const Device> device_;
};

class Device final : public Backend, public std::enable_shared_from_this<Device> {
public:
    Device(const Driver& d, int number, std::string name, std::string bus, std::uint64_t granularity, bool rdma)
        : Backend(std::move(name), std::move(bus)),
          driver(d),
          ordinal(number),
          granularity_(granularity),
          rdma_(rdma),
          bar1_(bar1_bytes(this->bus())) {}

    const Driver& driver;
    const int ordinal;

    std::uint64_t granularity() const override { return granularity_; }

    CUmemAllocationProp properties() const {
        CUmemAllocationProp p{};
        p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.location.id = ordinal;
        p.allocFlags.gpuDirectRDMACapable = rdma_ ? 1 : 0;
        return p;
    }

    // "<label>: <what> <size>: <status>".
    std::unexpected<std::string> failed(const std::string& what, std::uint64_t bytes, CUresult status) const {
        return fail(label(), ": ", what, " ", text::bytes(bytes), ": ", driver.describe(status));
    }
    std::unexpected<std::string> failed(const std::string& what, std::uint64_t bytes, cudaError_t status) const {
        return fail(label(), ": ", what, " ", text::bytes(bytes), ": ", describe(status));
    }

    Result<std::shared_ptr<Allocation>> alloc(std::int64_t address, std::uint64_t bytes) override {
        CUdeviceptr placed = 0;
        const auto want = static_cast<CUdeviceptr>(address);
        if (CUresult s = driver.cuMemAddressReserve(&placed, bytes, granularity_, want, 0); s != CUDA_SUCCESS)
            return failed("could not reserve the Space address " + hex(address) + " for", bytes, s);
        auto memory = std::make_shared<Memory>(shared_from_this(), placed, bytes);
        if (placed != want)
            return fail(label(), ": CUDA placed the reservation of ", text::bytes(bytes), " at ",
                        hex(static_cast<std::int64_t>(placed)), ", not at the Space address ", hex(address),
                        ": the process uses that address already (reserve the Space's range before CUDA takes it)");
        const CUmemAllocationProp p = properties();
        if (CUresult s = driver.cuMemCreate(&memory->handle, bytes, &p, 0); s != CUDA_SUCCESS) {
            if (s != CUDA_ERROR_OUT_OF_MEMORY) return failed("could not create", bytes, s);
            std::size_t free = 0, total = 0;
            cudaSetDevice(ordinal);
            cudaMemGetInfo(&free, &total);
            return fail(label(), ": out of memory for ", text::bytes(bytes), " (", text::bytes(free), " free of ",
                        text::bytes(total), "): ", driver.describe(s));
        }
        memory->created = true;
        if (CUresult s = driver.cuMemMap(placed, bytes, 0, memory->handle, 0); s != CUDA_SUCCESS)
            return failed("could not map the Space address " + hex(address) + " to", bytes, s);
        memory->mapped = true;
        const CUmemAccessDesc desc = access(ordinal, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        if (CUresult s = driver.cuMemSetAccess(placed, bytes, &desc, 1); s != CUDA_SUCCESS)
            return failed("could not grant access to", bytes, s);
        return memory;
    }

    Result<std::shared_ptr<Allocation>> map(const std::shared_ptr<Allocation>& peer, std::int64_t address,
                                            std::uint64_t bytes) override {
        const auto* memory = dynamic_cast<const Memory*>(peer.get());
        if (memory == nullptr)
            throw std::invalid_argument("cuda: " + label() + " cannot map memory of another kind of GPU at " +
                                        hex(address));
        int can = 0;
        if (cudaError_t s = cudaDeviceCanAccessPeer(&can, ordinal, memory->device().ordinal); s != cudaSuccess)
            return failed("could not ask whether it reaches the peer's", bytes, s);
        if (can == 0)
            return fail(label(), ": cannot reach the ", text::bytes(bytes), " at ", hex(address), " of ",
                        memory->device().label(), ": CUDA reports no peer access between them");
        std::lock_guard lock(peers_mutex_);
        if (peers_[memory->address()] == 0) {
            const CUmemAccessDesc desc = access(ordinal, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
            if (CUresult s = driver.cuMemSetAccess(memory->address(), bytes, &desc, 1); s != CUDA_SUCCESS) {
                peers_.erase(memory->address());
                return failed("could not map the peer's memory at " + hex(address) + " of", bytes, s);
            }
        }
        ++peers_[memory->address()];
        return std::make_shared<Mapping>(shared_from_this(), peer, *memory, bytes);
    }

    // A Mapping went: the last one of a peer's memory takes this device's access away.
    void unmapped(CUdeviceptr address, std::uint64_t bytes) const {
        std::lock_guard lock(peers_mutex_);
        if (--peers_[address] > 0) return;
        peers_.erase(address);
        const CUmemAccessDesc desc = access(ordinal, CU_MEM_ACCESS_FLAGS_PROT_NONE);
        driver.cuMemSetAccess(address, bytes, &desc, 1);
    }

    Result<void> copy(void* to, const void* from, std::uint64_t n, cudaMemcpyKind kind, const char* what) const {
        if (cudaError_t s = cudaSetDevice(ordinal); s != cudaSuccess) return failed(what, n, s);
        if (cudaError_t s = cudaMemcpy(to, from, n, kind); s != cudaSuccess) return failed(what, n, s);
        return {};
    }

    static std::byte* at(const Allocation& memory, std::uint64_t offset) {
        return reinterpret_cast<std::byte*>(address_of(memory)) + offset;
    }

    Result<std::shared_ptr<HostAllocation>> host(std::uint64_t bytes) override {
        if (cudaError_t s = cudaSetDevice(ordinal); s != cudaSuccess)
            return failed("could not allocate host memory of", bytes, s);
        void* at = nullptr;
        if (cudaError_t s = cudaHostAlloc(&at, bytes, cudaHostAllocPortable); s != cudaSuccess)
            return failed("could not allocate pinned host memory of", bytes, s);
        return std::make_shared<Pinned>(shared_from_this(), static_cast<std::byte*>(at), bytes);
    }

    Result<void> upload(Allocation& memory, std::uint64_t offset, std::span<const std::byte> bytes) override {
        return copy(at(memory, offset), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, "could not upload");
    }
    Result<void> download(Allocation& memory, std::uint64_t offset, std::span<std::byte> out) override {
        return copy(out.data(), at(memory, offset), out.size(), cudaMemcpyDeviceToHost, "could not download");
    }

    Result<void> copy_to_host(Allocation& memory, std::uint64_t offset, const HostBuffer& host,
                              std::uint64_t host_offset, std::uint64_t n) override {
        auto to = process_bytes(host, host_offset, n);
        if (!to) return std::unexpected(std::move(to).error());
        return copy(*to, at(memory, offset), n, cudaMemcpyDeviceToHost, "could not copy to host memory");
    }
    Result<void> copy_from_host(const HostBuffer& host, std::uint64_t host_offset, Allocation& memory,
                                std::uint64_t offset, std::uint64_t n) override {
        auto from = process_bytes(host, host_offset, n);
        if (!from) return std::unexpected(std::move(from).error());
        return copy(at(memory, offset), *from, n, cudaMemcpyHostToDevice, "could not copy from host memory");
    }

    Result<void> fill(Allocation& memory, std::uint64_t offset, std::uint64_t n, std::uint64_t seed) override {
        const kernels::Status s = kernels::fill(ordinal, address_of(memory) + offset, n, seed);
        if (s.code != 0) return fail(label(), ": could not fill ", text::bytes(n), ": ", s.message);
        return {};
    }
    Result<std::uint64_t> checksum(Allocation& memory, std::uint64_t offset, std::uint64_t n) override {
        std::uint64_t sum = 0;
        const kernels::Status s = kernels::checksum(ordinal, address_of(memory) + offset, n, &sum);
        if (s.code != 0) return fail(label(), ": could not checksum ", text::bytes(n), ": ", s.message);
        return sum;
    }

    std::optional<std::uint64_t> bar1() const { return bar1_; }

private:
    std::uint64_t granularity_;
    bool rdma_;
    std::optional<std::uint64_t> bar1_;
    // How many Mappings of each peer's memory this device has: cuMemSetAccess grants a
    // device access to a range once, so only the last Mapping may take it away.
    mutable std::mutex peers_mutex_;
    mutable std::map<CUdeviceptr, int> peers_;
};

Memory::~Memory() {
    const Driver& d = device_->driver;
    if (mapped) d.cuMemUnmap(address_, bytes_);
    if (created) d.cuMemRelease(handle);
    d.cuMemAddressFree(address_, bytes_);
}

Result<std::vector<pci::Run>> Memory::runs(std::uint64_t offset, std::uint64_t bytes) const {
    // NVIDIA's driver hands the BAR1 pages behind a range only to kernel code: to an
    // in-kernel RDMA driver through nvidia-peermem (nvidia_p2p_get_pages, which the
    // P2P tokens of cuPointerGetAttribute are for) and to a dma-buf importer's attachment
    // (cuMemGetHandleForAddressRange). No CUDA call and no /proc file shows them to the
    // process, so a NIC driven from user space has no bus address to put in its page list.
    return fail(
        device_->label(), ": no bus addresses for the ", text::bytes(bytes), " at ",
        hex(static_cast<std::int64_t>(address_ + offset)),
        ": NVIDIA's driver maps the BAR1 pages of CUDA memory only for kernel importers (nvidia-peermem's "
        "nvidia_p2p_get_pages, a dma-buf attachment) and no CUDA call shows them to a process, so a NIC driven "
        "from user space cannot register it; Memory::dmabuf exports the range as a dma-buf of BAR1 for a kernel "
        "importer such as ibv_reg_dmabuf_mr (rdma-core, the NIC's kernel driver)");
}

Result<Dmabuf> Memory::dmabuf(std::uint64_t offset, std::uint64_t bytes) const {
    if (const auto bar = device_->bar1(); bar && bytes > *bar)
        return fail(device_->label(), ": BAR1 is ", text::bytes(*bar), ", too small for a dma-buf of ",
                    text::bytes(bytes));
    int fd = -1;
    const CUresult s = device_->driver.cuMemGetHandleForAddressRange(&fd, address_ + offset, bytes,
                                                                     CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                                                                     CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
    if (s != CUDA_SUCCESS)
        return fail(device_->label(), ": no dma-buf through BAR1 of ", text::bytes(bytes), " at ",
                    hex(static_cast<std::int64_t>(address_ + offset)), ": ", device_->driver.describe(s));
    return Dmabuf(fd, bytes, 0);
}

Mapping::~Mapping() { device_->unmapped(memory_.address(), bytes_); }

// Unified addressing: the Space address is the device pointer, on the GPU that maps it.
Result<Pointer> Memory::pointer() const {
    return Pointer{Pointer::Device::Cuda, device_->ordinal, reinterpret_cast<std::byte*>(address_)};
}
Result<Pointer> Mapping::pointer() const {
    return Pointer{Pointer::Device::Cuda, device_->ordinal, reinterpret_cast<std::byte*>(memory_.address())};
}

Result<int> device_count(const Driver&) {
    int n = 0;
    if (cudaError_t s = cudaGetDeviceCount(&n); s != cudaSuccess && s != cudaErrorNoDevice)
        return fail("CUDA: cannot count the GPUs: ", describe(s));
    return n;
}

}  // namespace

Result<int> count() {
    auto driver = Driver::get();
    if (!driver) return std::unexpected(std::move(driver).error());
    return device_count(**driver);
}

Result<Gpu> open(int ordinal, std::shared_ptr<Space> space) {
    if (!space) throw std::invalid_argument("cuda::open: no Space");
    if (ordinal < 0) throw std::invalid_argument("cuda::open: GPU " + std::to_string(ordinal));
    auto driver = Driver::get();
    if (!driver) return std::unexpected(std::move(driver).error());
    const Driver& d = **driver;
    auto n = device_count(d);
    if (!n) return std::unexpected(std::move(n).error());
    if (ordinal >= *n) return fail("CUDA: no GPU ", std::to_string(ordinal), " (", std::to_string(*n), " found)");

    cudaDeviceProp properties{};
    if (cudaError_t s = cudaGetDeviceProperties(&properties, ordinal); s != cudaSuccess)
        return fail("CUDA: GPU ", std::to_string(ordinal), ": ", describe(s));
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", static_cast<unsigned>(properties.pciDomainID),
                  static_cast<unsigned>(properties.pciBusID), static_cast<unsigned>(properties.pciDeviceID));
    const std::string label = std::string(bus) + " (" + properties.name + ")";

    CUdevice device = 0;
    if (CUresult s = d.cuDeviceGet(&device, ordinal); s != CUDA_SUCCESS) return fail(label, ": ", d.describe(s));
    int vmm = 0, rdma = 0;
    if (CUresult s = d.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device);
        s != CUDA_SUCCESS)
        return fail(label, ": ", d.describe(s));
    if (vmm == 0)
        return fail(label, ": no virtual memory management (cuMemAddressReserve), so no memory at Space addresses");
    if (CUresult s = d.cuDeviceGetAttribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, device);
        s != CUDA_SUCCESS)
        rdma = 0;

    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = ordinal;
    std::size_t granularity = 0;
    if (CUresult s = d.cuMemGetAllocationGranularity(&granularity, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        s != CUDA_SUCCESS)
        return fail(label, ": no allocation granularity: ", d.describe(s));
    if (granularity < 4096) granularity = 4096;

    auto backend = std::make_shared<Device>(d, ordinal, properties.name, bus, granularity, rdma != 0);
    return Gpu(std::move(backend), std::move(space));
}

}  // namespace rig::gpu::cuda

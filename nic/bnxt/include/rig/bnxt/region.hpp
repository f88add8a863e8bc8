// rig/bnxt/region.hpp: memory a NIC reads and writes (docs/api.md, "Region", is
// the contract; docs/design.md, "NIC driver").
//
// A region is local to its NIC: a peer's sends write it only through a receive this
// process posted (Qp::post of a Recv), and only queue pairs connected to queue pairs of its own NIC
// read it (RDMA READ). Its rights are LOCAL_WRITE and REMOTE_READ, never REMOTE_WRITE.
// The NIC writes a region in the order of the entries that write it, and the bytes of a
// receive or a read are in memory once Cq::poll or Cq::wait has taken its completion:
// Nic::open turned the NIC's Relaxed Ordering off. A flag inside the data is not a
// visibility point; the completion is (docs/bugs.md B27).
//
// Registration (docs/hsi.md §4.6.12, §6): ALLOCATE_MRW (type MR) gives the key,
// REGISTER_MR binds it to the region's pages through a page list of the level its size
// needs: level 0 for one page, 1 for up to 512 pages, 2 beyond (§2.2). The page size is
// the largest power of two from 4 KiB to 1 GiB that every run's address and size and
// the region's address are multiples of. The lkey and rkey are that key (§6.1); a peer
// names the region's bytes by address() + offset with rkey() (remote()).
//
// A Region is a handle: copies share one region. The last copy's destructor deregisters
// it if nobody did. Thread safety: read and write may run on several threads (on
// distinct bytes); deregister, like every firmware command, takes the NIC's channel lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "rig/bnxt/nic.hpp"
#include "rig/pci/dma.hpp"
#include "rig/result.hpp"

namespace rig::bnxt {

// A peer's bytes, as its owner sent them: Region::remote on the peer's side.
struct Remote {
    std::uint64_t address = 0;  // in the peer region's address space (its address() + offset)
    std::uint32_t rkey = 0;
    friend bool operator==(const Remote&, const Remote&) = default;
};

enum class RegionKind : std::uint8_t {
    Host,    // system memory the library allocated (host)
    Pages,   // the process's own pages (pages)
    Device,  // another device's memory behind its BAR (device)
};

class Region {
public:
    // A region over `bytes` bytes, rounded up to the machine's page, of new zeroed system
    // memory of nic's machine, which read and write reach. Error naming the NIC and the
    // size if the machine has no memory for it (Function::alloc_dma), or naming the
    // command and status if the firmware refuses it. Throws std::invalid_argument if
    // bytes is 0 or the NIC is closed.
    static Result<Region> host(const Nic& nic, std::uint64_t bytes);

    // A region over the process's bytes `memory`, which start on a page of nic's machine,
    // pinned for the NIC (Function::pin) until deregister or close. The NIC reaches the
    // pages that held the bytes when pages ran, whatever the process maps there later.
    // Error if the machine has no room to pin them, the system refuses, or the firmware
    // refuses the region; on a NIC without an IOMMU (Addressing::Physical) memory that
    // Function::alloc_dma did not give is refused: its pages go back to the system when
    // the process dies while the NIC may still write them. Throws std::invalid_argument
    // if memory is empty, does not start on a page, or the NIC is closed.
    // The bytes are claimed in pci::process_claims() until the region is deregistered, so
    // that their owner (Gpu::free of Gpu::host memory) refuses to give them back (B18).
    static Result<Region> pages(const Nic& nic, std::span<std::byte> memory);

    // A region over another device's memory at `runs` (bus address, bytes), in order,
    // such as a GPU's memory behind its BAR, which must stay there until the region is
    // deregistered. Decided before anything is registered, run by run, by Linux's rule
    // (pci_p2pdma_map_type() in Linux's drivers/pci/p2pdma.c) on the route from the NIC to the function
    // whose BAR holds the run (Machine::bar_at, Machine::route):
    //  - direct (PCI_P2PDMA_MAP_BUS_ADDR): the NIC's requests carry the bus addresses, and
    //    a switch or root port takes them to the BAR before any IOMMU sees them; nothing
    //    is mapped, behind an IOMMU too;
    //  - through the host bridge (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE): the bus addresses
    //    where the NIC reaches physical addresses; behind an IOMMU, IOVAs that
    //    Function::map_peer maps in the NIC's IOMMU domain to the BAR (counted with the
    //    NIC's pins, unmapped by deregister, given back by close);
    //  - not supported: Error naming the NIC, the run and the route's explanation (the
    //    bridges whose ACS redirects, the host bridge that refuses).
    // Error also where no function's BAR holds a run, a run runs past its BAR, the
    // machine's files cannot be read (a transport that sent no sysfs files), the NIC is
    // behind an IOMMU that cannot map the BAR for it (the reason map_peer gave), or the
    // firmware refuses the region. address() is the first run's address as the NIC's
    // requests carry it. Throws std::invalid_argument if runs is empty, a run's size is
    // 0, a run's address or size is not a multiple of 4096, or the NIC is closed. (The
    // seed's "negative address" cannot be written as a pci::Run.)
    // The runs are claimed on the NIC's machine (Machine::claims) until the region is
    // deregistered, so that their owner (Gpu::free) refuses to give them back (B18).
    static Result<Region> device(const Nic& nic, std::span<const pci::Run> runs);

    // Copies the out.size() bytes at `offset` of a host region into out. The bytes a
    // receive or read wrote are there once its completion was taken. Throws
    // std::invalid_argument if the bytes do not lie in the region, or it is not of host or
    // is deregistered (or its NIC closed).
    void read(std::uint64_t offset, std::span<std::byte> out) const;
    // Writes in at `offset` of a host region. A send posted after write returns sends
    // them. Throws std::invalid_argument as read does.
    void write(std::uint64_t offset, std::span<const std::byte> in) const;

    // Deregisters the region (DEREGISTER_MR, DEALLOCATE_KEY) and frees what the library
    // allocated for it, the memory of host included, unpins the pages of pages and unmaps
    // what device mapped into the NIC's IOMMU domain, and gives up its claim. The
    // NIC reads and writes the region no more once it returns Ok. Error naming the command
    // and status if the firmware refuses; then, and after any call an exception ended,
    // every later deregister is an Error, and the NIC may still reach the region's memory,
    // which stays allocated and pinned until the NIC closes. Ok and nothing done on a
    // region already deregistered or whose NIC closed.
    Result<void> deregister();

    RegionKind kind() const;
    std::uint64_t bytes() const;  // the region's size (host: rounded up to the page)
    std::uint32_t lkey() const;
    std::uint32_t rkey() const;
    std::uint64_t address() const;  // where a peer's Remote names byte 0 (REGISTER_MR.va)
    // The peer's name for the byte at `offset`: {address() + offset, rkey()}. Throws
    // std::invalid_argument if offset is beyond the region.
    Remote remote(std::uint64_t offset = 0) const;
    bool deregistered() const;

    struct State;  // the driver's, behind the handle

private:
    friend struct Handles;  // the driver's way to the state (nic/bnxt/src/state.hpp)
    explicit Region(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

}  // namespace rig::bnxt

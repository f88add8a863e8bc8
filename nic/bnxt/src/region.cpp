// Regions (rig/bnxt/region.hpp; docs/api.md, "Region"; docs/hsi.md §4.6.12,
// §6): memory allocated, pinned or named by bus address, registered with ALLOCATE_MRW and
// REGISTER_MR over a page list of the level its size needs. A device region is decided by
// the route to the BAR that holds its runs before anything is registered.
#include "rig/bnxt/region.hpp"

#include <optional>
#include <stdexcept>

#include "rig/pci/function.hpp"
#include "rig/pci/machine.hpp"
#include "rig/text.hpp"
#include "state.hpp"

namespace rig::bnxt {
namespace {

// §6.4: the region's rights. Never REMOTE_WRITE: a peer writes a region only through a
// receive its owner posted (docs/api.md, "Region").
constexpr std::uint8_t region_access = hsi::mr_access::LOCAL_WRITE | hsi::mr_access::REMOTE_READ;

const std::shared_ptr<Nic::State>& open_nic(const Nic& nic, const char* call) {
    const auto& s = Handles::of(nic);
    if (!s || s->closed.load(std::memory_order_acquire))
        throw std::invalid_argument(std::string("rig::bnxt::Region::") + call + ": the NIC is closed");
    return s;
}

std::string region_name(const Region::State& r) {
    static constexpr const char* kinds[] = {"host", "pages", "device"};
    return std::string(kinds[static_cast<int>(r.kind)]) + " region of " + text::bytes(r.bytes);
}

// Who a claim of the region names to the memory's owner (B18).
std::string claimant(const Region::State& r) { return "the " + region_name(r) + " of NIC " + r.nic->bus; }

// ALLOCATE_MRW, then REGISTER_MR over the pages of `runs` (§4.6.12 two-step, §7.2 step 3);
// the region joins its NIC's registry. On an Error nothing stays registered.
Result<void> register_region(Region::State& r, std::span<const pci::Run> runs) {
    Nic::State& nic = *r.nic;
    const unsigned shift = detail::region_page_shift(r.va, runs);
    auto pages = detail::page_addresses(runs, shift);
    const std::uint64_t page = std::uint64_t{1} << shift;
    pages.resize((r.bytes + page - 1) / page);
    if (nic.limits.max_mr_size != 0 && r.bytes > nic.limits.max_mr_size)
        return fail(nic.bus, ": a region of ", text::bytes(r.bytes), " is larger than the NIC's ",
                    text::bytes(nic.limits.max_mr_size), " (QUERY_FUNC max_mr_size)");
    auto list = make_page_list(nic.fn, pages, detail::PageListKind::Region, region_name(r));
    if (!list) return std::unexpected(std::move(list).error());
    r.pages = std::move(*list);

    std::lock_guard lock(nic.mutex);
    if (nic.closed.load(std::memory_order_acquire)) return fail(nic.bus, ": the NIC closed");
    hsi::AllocateMrw allocate{};
    allocate.mrw_handle = reinterpret_cast<std::uintptr_t>(&r);
    allocate.mrw_flags =
        static_cast<std::uint8_t>(hsi::allocate_mrw::mrw_type(static_cast<std::uint8_t>(hsi::MrwType::MR)));
    allocate.pd_id = nic.pd_id;
    auto key = nic.rcfw->call(hsi::Opcode::ALLOCATE_MRW, allocate);
    if (!key) return std::unexpected(std::move(key).error());
    r.key = key->xid;

    hsi::RegisterMr command{};
    command.log2_pg_size_lvl = static_cast<std::uint8_t>(
        hsi::register_mr::lvl(static_cast<std::uint8_t>(r.pages.level)) | hsi::register_mr::log2_pg_size(shift));
    command.access = region_access;
    command.log2_pbl_pg_size = static_cast<std::uint16_t>(hsi::register_mr::log2_pbl_pg_size(12));
    command.key = r.key;
    command.pbl = r.pages.base;
    command.va = r.va;
    command.mr_size = r.bytes;
    if (auto done = nic.rcfw->call(hsi::Opcode::REGISTER_MR, command); !done) {
        hsi::DeallocateKey free_key{};
        free_key.mrw_flags = allocate.mrw_flags;
        free_key.key = r.key;
        (void)nic.rcfw->call(hsi::Opcode::DEALLOCATE_KEY, free_key);
        return std::unexpected(std::move(done).error());
    }
    r.life = Region::State::Life::Registered;
    nic.regions.push_back(&r);
    return {};
}

Region::State& checked(const std::shared_ptr<Region::State>& s) {
    if (!s) throw std::invalid_argument("rig::bnxt::Region: a moved-from Region");
    return *s;
}

void check_bytes(const Region::State& r, std::uint64_t offset, std::uint64_t n, const char* call) {
    if (r.kind != RegionKind::Host)
        throw std::invalid_argument(std::string("rig::bnxt::Region::") + call + ": a " + region_name(r) +
                                    " is not of host memory");
    if (r.life == Region::State::Life::Deregistered || r.nic->closed.load(std::memory_order_acquire))
        throw std::invalid_argument(std::string("rig::bnxt::Region::") + call + ": the " + region_name(r) +
                                    " is deregistered");
    if (offset > r.bytes || n > r.bytes - offset)
        throw std::invalid_argument(std::string("rig::bnxt::Region::") + call + ": " + text::bytes(n) + " at offset " +
                                    text::hex(offset) + " do not lie in the " + region_name(r));
}

}  // namespace

Result<Region> Region::host(const Nic& nic, std::uint64_t bytes) {
    if (bytes == 0) throw std::invalid_argument("rig::bnxt::Region::host: a region of 0 bytes");
    auto state = std::make_shared<State>();
    state->nic = open_nic(nic, "host");
    state->kind = RegionKind::Host;
    const std::uint64_t page = state->nic->fn.machine().page();
    if (bytes > ~std::uint64_t{0} - page)
        return fail(nic.bus(), ": no memory for a host region of ", std::to_string(bytes), " bytes");
    auto memory =
        DmaBuffer::allocate(state->nic->fn, (bytes + page - 1) / page * page, pci::Contiguity::Any, "host region");
    if (!memory) return std::unexpected(std::move(memory).error());
    state->bytes = memory->bytes();
    state->va = memory->bus();
    state->memory = std::move(*memory);
    state->view = state->memory.window();
    const std::vector<pci::Run> runs = state->memory.runs();
    if (auto r = register_region(*state, runs); !r) return std::unexpected(std::move(r).error());
    return Region(std::move(state));
}

Result<Region> Region::pages(const Nic& nic, std::span<std::byte> memory) {
    if (memory.empty()) throw std::invalid_argument("rig::bnxt::Region::pages: a region of 0 bytes");
    auto state = std::make_shared<State>();
    state->nic = open_nic(nic, "pages");
    const std::uint64_t page = state->nic->fn.machine().page();
    const auto address = reinterpret_cast<std::uintptr_t>(memory.data());
    if (address % page != 0)
        throw std::invalid_argument("rig::bnxt::Region::pages: address " + text::hex(address) +
                                    " is not on a page of " + text::bytes(page));
    state->kind = RegionKind::Pages;
    state->bytes = memory.size();
    state->va = address;
    auto runs = state->nic->fn.pin(memory.data(), memory.size());
    if (!runs) return std::unexpected(std::move(runs).error());  // Function::pin names the function and the bytes
    state->pinned = memory.data();
    state->pinned_bytes = memory.size();
    const pci::Span span{address, memory.size()};
    state->claim = pci::process_claims().claim({&span, 1}, claimant(*state));
    if (auto r = register_region(*state, *runs); !r) {
        state->nic->fn.unpin(state->pinned, state->pinned_bytes);
        state->pinned = nullptr;
        return std::unexpected(std::move(r).error());
    }
    return Region(std::move(state));
}

namespace {

// What the NIC's requests carry to reach `run` of another function's BAR, by Linux's rule
// (pci_p2pdma_map_type() in Linux's drivers/pci/p2pdma.c): the bus addresses where a switch or root
// port carries them straight to the BAR (PCI_P2PDMA_MAP_BUS_ADDR, an IOMMU or not: it
// never sees them); where the root complex carries them (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE),
// the bus addresses without an IOMMU and IOVAs the NIC's IOMMU domain maps to the BAR
// behind one; an Error naming the bridges and host bridge where the bus carries them
// nowhere (PCI_P2PDMA_MAP_NOT_SUPPORTED). `mapped` collects what map_peer mapped.
struct Provider {
    pci::BarOf bar;
    pci::Route route;
};

Result<pci::Run> reach(Nic::State& nic, const pci::Run& run, std::optional<Provider>& last,
                       std::vector<pci::Run>& mapped) {
    const pci::Machine& machine = nic.fn.machine();
    const std::string what = "the run of " + text::bytes(run.bytes) + " at " + text::hex(run.address.value);
    const auto inside = [&](const pci::Bar& bar) {
        return run.address >= bar.address && run.address.value - bar.address.value < bar.bytes;
    };
    if (!last || !inside(last->bar.bar)) {
        if (!machine.root())
            return fail(nic.bus, ": cannot tell whose BAR holds ", what,
                        ": the machine's transport sent no sysfs files, "
                        "so neither the BAR nor the route to it can be read");
        auto owner = machine.bar_at(run.address);
        if (!owner) return fail(nic.bus, ": cannot tell whose BAR holds ", what, ": ", owner.error());
        if (!*owner) return fail(nic.bus, ": ", what, " lies in no BAR of a function of the machine (sysfs resource)");
        last = Provider{**owner, machine.route((*owner)->bus, nic.bus)};
    }
    const pci::BarOf& owner = last->bar;
    const std::string bar = owner.bus + " BAR" + std::to_string(owner.index);
    const std::uint64_t offset = run.address.value - owner.bar.address.value;
    if (run.bytes > owner.bar.bytes - offset)
        return fail(nic.bus, ": ", what, " runs past the end of ", bar, " (", text::bytes(owner.bar.bytes), " at ",
                    text::hex(owner.bar.address.value), ")");
    const pci::Route& route = last->route;
    switch (route.verdict) {
    case pci::Verdict::Direct: return run;
    case pci::Verdict::ThroughHostBridge: {
        if (nic.fn.addressing() == pci::Addressing::Physical) return run;
        auto iova = nic.fn.map_peer(owner.bus, owner.index, offset, run.bytes);
        if (!iova)
            return fail(
                nic.bus, ": the NIC is behind an IOMMU and its requests reach ", bar,
                " through the host bridge, so the IOMMU must map the BAR for it, and it cannot: ", iova.error());
        mapped.push_back(*iova);
        return *iova;
    }
    case pci::Verdict::NotSupported:
    case pci::Verdict::Unread: break;
    }
    return fail(nic.bus, ": the bus does not carry the NIC's requests to ", bar, ", so ", what,
                " is not registered: ", route.explain());
}

}  // namespace

Result<Region> Region::device(const Nic& nic, std::span<const pci::Run> runs) {
    if (runs.empty()) throw std::invalid_argument("rig::bnxt::Region::device: no runs");
    std::uint64_t total = 0;
    for (const pci::Run& run : runs) {
        if (run.bytes == 0)
            throw std::invalid_argument("rig::bnxt::Region::device: the run at " + text::hex(run.address.value) +
                                        " has no bytes");
        if (run.address.value % pci::page_bytes != 0 || run.bytes % pci::page_bytes != 0)
            throw std::invalid_argument("rig::bnxt::Region::device: the run of " + text::bytes(run.bytes) + " at " +
                                        text::hex(run.address.value) + " is not a multiple of 4096");
        total += run.bytes;
    }
    auto state = std::make_shared<State>();
    state->nic = open_nic(nic, "device");
    Nic::State& n = *state->nic;
    state->kind = RegionKind::Device;
    state->bytes = total;
    // Claimed first, so that the owner cannot give the memory back while it is registered.
    std::vector<pci::Span> spans;
    for (const pci::Run& run : runs) spans.push_back({run.address.value, run.bytes});
    state->claim = n.fn.machine().claims().claim(spans, claimant(*state));
    // Every run is decided, and mapped where it must be, before anything is registered.
    std::vector<pci::Run> reached;
    std::optional<Provider> last;
    const auto unmap = [&] {
        for (const pci::Run& run : state->peers) n.fn.unmap_peer(run);
        state->peers.clear();
    };
    for (const pci::Run& run : runs) {
        auto r = reach(n, run, last, state->peers);
        if (!r) {
            unmap();
            return std::unexpected(std::move(r).error());
        }
        reached.push_back(*r);
    }
    state->va = reached.front().address.value;
    if (auto r = register_region(*state, reached); !r) {
        unmap();
        return std::unexpected(std::move(r).error());
    }
    return Region(std::move(state));
}

Result<void> Region::State::deregister_locked() {
    if (life != Life::Registered) return {};
    Nic::State& n = *nic;
    std::erase(n.regions, this);
    usable.store(false, std::memory_order_release);
    if (n.rcfw) {
        hsi::DeregisterMr command{};
        command.lkey = key;
        if (auto done = n.rcfw->call(hsi::Opcode::DEREGISTER_MR, command); !done) {
            // docs/api.md, "Region": the NIC may still reach the memory; it stays until close.
            life = Life::Stuck;
            n.kept_claims.push_back(std::move(claim));
            n.kept.push_back(std::move(memory));
            n.kept.push_back(std::move(pages.table));
            return std::unexpected(std::move(done).error());
        }
    }
    life = Life::Deregistered;
    Result<void> result;
    if (n.rcfw) {
        hsi::DeallocateKey command{};
        command.mrw_flags =
            static_cast<std::uint8_t>(hsi::allocate_mrw::mrw_type(static_cast<std::uint8_t>(hsi::MrwType::MR)));
        command.key = key;
        // The key is unbound: the NIC reaches the memory no more even where it keeps the key.
        if (auto done = n.rcfw->call(hsi::Opcode::DEALLOCATE_KEY, command); !done)
            result = std::unexpected(std::move(done).error());
    }
    memory.reset();
    pages.table.reset();
    if (pinned != nullptr && !n.fn.released()) n.fn.unpin(pinned, pinned_bytes);
    pinned = nullptr;
    if (!n.fn.released())
        for (const pci::Run& run : peers) n.fn.unmap_peer(run);
    peers.clear();
    claim.drop();  // the NIC reaches the memory no more: its owner may give it back
    return result;
}

Region::State::~State() {
    if (!nic || life != Life::Registered) return;
    std::lock_guard lock(nic->mutex);
    if (!nic->closed.load(std::memory_order_acquire)) (void)deregister_locked();
}

Result<void> Region::deregister() {
    State& r = checked(state_);
    std::lock_guard lock(r.nic->mutex);
    if (r.life == State::Life::Stuck)
        return fail(r.nic->bus, ": the ", region_name(r),
                    " could not be deregistered earlier; its memory stays allocated and pinned until the NIC closes");
    if (r.life == State::Life::Deregistered || r.nic->closed.load(std::memory_order_acquire)) return {};
    return r.deregister_locked();
}

void Region::read(std::uint64_t offset, std::span<std::byte> out) const {
    const State& r = checked(state_);
    check_bytes(r, offset, out.size(), "read");
    r.view.read(offset, out);
}

void Region::write(std::uint64_t offset, std::span<const std::byte> in) const {
    const State& r = checked(state_);
    check_bytes(r, offset, in.size(), "write");
    r.view.write(offset, in);
}

RegionKind Region::kind() const { return checked(state_).kind; }
std::uint64_t Region::bytes() const { return checked(state_).bytes; }
std::uint32_t Region::lkey() const { return checked(state_).key; }
std::uint32_t Region::rkey() const { return checked(state_).key; }
std::uint64_t Region::address() const { return checked(state_).va; }
bool Region::deregistered() const {
    const State& r = checked(state_);
    return r.life == State::Life::Deregistered || r.nic->closed.load(std::memory_order_acquire);
}

Remote Region::remote(std::uint64_t offset) const {
    const State& r = checked(state_);
    if (offset > r.bytes)
        throw std::invalid_argument("rig::bnxt::Region::remote: offset " + text::hex(offset) + " is beyond the " +
                                    region_name(r));
    return Remote{r.va + offset, r.key};
}

}  // namespace rig::bnxt

// Building a simulated machine, and its Ops: listing, taking and reserving (system.hpp).
#include "rig/sim/system.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "rig/pci/groups.hpp"
#include "rig/pci/reservation.hpp"
#include "rig/pci/transport.hpp"
#include "rig/sim/fixture.hpp"
#include "rig/text.hpp"
#include "state.hpp"

namespace rig::sim {
namespace {

namespace fs = std::filesystem;

// IOVAs an IOMMU domain hands out: 48 bits less the first MiB and the x86 MSI window
// (0xfee00000-0xfeefffff), which Linux reserves in every domain.
constexpr std::uint64_t iova_start = 0x10'0000;
constexpr std::uint64_t msi_start = 0xfee0'0000, msi_end = 0xfef0'0000;
constexpr std::uint64_t iova_end = std::uint64_t{1} << 48;
// Physical memory: above the first MiB, with the 32-bit PCI hole at 3..4 GiB, up to the
// BAR aperture.
constexpr std::uint64_t memory_start = 0x10'0000;
constexpr std::uint64_t hole_start = 0xc000'0000, hole_end = 0x1'0000'0000;

// Adds [start, end) less [cut_start, cut_end).
void add_less(pci::RangeAllocator& to, std::uint64_t start, std::uint64_t end, std::uint64_t cut_start,
              std::uint64_t cut_end) {
    if (cut_end <= start || cut_start >= end) return to.add(start, end);
    if (start < cut_start) to.add(start, cut_start);
    if (cut_end < end) to.add(cut_end, end);
}

// $TMPDIR, else /dev/shm (the tree is small and read often), else /tmp.
fs::path make_temp_dir(const std::string& name) {
    const char* base = std::getenv("TMPDIR");
    std::string dir = base && *base ? base : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string pattern = dir + "/rig-sim-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error(name + ": cannot make a temporary directory for the sysfs tree at " + pattern);
    return pattern;
}

void check_identity(const Topology::Function& f, const Identity& id, const std::string& bus) {
    const Spec& s = f.spec;
    const auto refuse = [&](const std::string& what) {
        throw std::invalid_argument("System::build: the model at " + bus + " disagrees with its Spec: " + what);
    };
    if (id.vendor != s.vendor || id.device != s.device_id)
        refuse("IDs " + text::hex(id.vendor, 4) + ":" + text::hex(id.device, 4) + " vs " + text::hex(s.vendor, 4) +
               ":" + text::hex(s.device_id, 4));
    if (id.class_code != s.class_code)
        refuse("class " + text::hex(id.class_code, 6) + " vs " + text::hex(s.class_code, 6));
    for (unsigned i = 0; i < id.bars.size(); ++i) {
        const BarSpec& a = id.bars[i];
        const BarSpec& b = s.bars[i];
        if (a.bytes != b.bytes || (a.bytes && (a.prefetchable != b.prefetchable || a.is64 != b.is64)))
            refuse("BAR" + std::to_string(i) + " " + text::bytes(a.bytes) + " vs " + text::bytes(b.bytes));
    }
}

class SimOps final : public pci::Ops {
public:
    SimOps(std::shared_ptr<System::State> state, std::shared_ptr<pci::Transport> transport)
        : state_(std::move(state)), transport_(std::move(transport)) {}

    std::optional<std::string> failed() const override { return state_->failed(); }
    std::uint64_t page() const override { return state_->page; }

    Result<std::vector<pci::Id>> functions() override {
        if (!state_->call(Operation::Functions, {})) return std::unexpected(*state_->failed());
        std::vector<pci::Id> ids;
        for (const auto& f : state_->topology.functions())
            ids.push_back({f.address.to_string(), f.spec.vendor, f.spec.device_id, f.spec.class_code});
        return ids;
    }

    Result<std::unique_ptr<pci::FunctionOps>> take(std::string_view bus_view) override {
        const std::string bus(bus_view);
        if (!state_->call(Operation::Take, bus)) return std::unexpected(*state_->failed());
        const auto& name = state_->name;
        if (!state_->topology.find(bus)) return fail(name, ": ", bus, ": no such function");
        Slot* slot = state_->find(bus);
        if (!slot) return fail(name, ": ", bus, " has no device model to take (a bridge, or an endpoint without one)");
        // As VFIO takes: the function bound to vfio-pci (or to none), its group viable.
        const Spec& spec = state_->topology[*state_->topology.find(bus)].spec;
        if (!spec.driver.empty() && spec.driver != "vfio-pci")
            return fail(name, ": ", bus, " is bound to the driver ", spec.driver,
                        "; to take it, unbind it and bind vfio-pci");
        auto group = pci::iommu_group(state_->routes, bus);
        if (!group) return fail(name, ": ", bus, ": ", group.error());
        if (*group)
            if (auto why = pci::not_viable(**group, bus); !why.empty()) return fail(name, ": ", bus, ": ", why);
        bool inherited = false;
        {
            std::lock_guard lock(state_->take_mutex);
            if (slot->taken) return fail(name, ": ", bus, " is taken already");
            slot->taken = true;
        }
        {
            std::lock_guard hold(slot->holdings_mutex);
            inherited = !slot->kept.empty();
        }
        slot->take_config();
        return make_function_ops(state_, *slot, transport_, inherited);
    }

    Result<void> reserve(std::uintptr_t base, std::uint64_t bytes) override {
        if (!state_->call(Operation::Reserve, {})) return std::unexpected(*state_->failed());
        return pci::reserve_addresses(base, bytes);
    }

private:
    std::shared_ptr<System::State> state_;
    std::shared_ptr<pci::Transport> transport_;
};

}  // namespace

Spec endpoint_spec(std::uint8_t device, std::uint8_t function, const Identity& identity) {
    Spec s;
    s.device = device;
    s.function = function;
    s.vendor = identity.vendor;
    s.device_id = identity.device;
    s.class_code = identity.class_code;
    s.port_type = pci::config::PortType::Endpoint;
    s.bars = identity.bars;
    return s;
}

System::State::State(std::string n, Topology t, fs::path root, bool own)
    : name(std::move(n)),
      topology(std::move(t)),
      sysfs(std::move(root)),
      own_sysfs(own),
      routes(pci::Machine::at(sysfs)) {}

System::State::~State() {
    for (auto& s : slots)
        if (s && s->attached) s->model->detach();  // models stop using their ports before the state goes
    if (own_sysfs) {
        std::error_code ec;
        fs::remove_all(sysfs, ec);
    }
}

Slot* System::State::find(std::string_view bus) {
    for (auto& s : slots)
        if (s && s->bus == bus) return s.get();
    return nullptr;
}

Slot& System::State::slot(std::string_view bus) {
    if (Slot* s = find(bus)) return *s;
    throw std::invalid_argument(name + ": no device model sits at " + std::string(bus));
}

Result<System> System::build(std::string name, Topology topology, std::vector<Attachment> models,
                             std::optional<fs::path> sysfs) {
    // Check every attachment before anything is written or attached.
    std::vector<std::optional<std::size_t>> at(models.size());
    for (std::size_t i = 0; i < models.size(); ++i) {
        const auto& a = models[i];
        if (!a.model) throw std::invalid_argument("System::build: no model at " + a.bus);
        auto ref = topology.find(a.bus);
        if (!ref) throw std::invalid_argument("System::build: " + a.bus + " is no function of the topology");
        if (topology[*ref].spec.is_bridge()) throw std::invalid_argument("System::build: " + a.bus + " is a bridge");
        for (std::size_t j = 0; j < i; ++j)
            if (at[j] == ref->index) throw std::invalid_argument("System::build: two models at " + a.bus);
        check_identity(topology[*ref], a.model->identity(), a.bus);
        at[i] = ref->index;
    }

    const bool own = !sysfs;
    const fs::path root = sysfs ? *sysfs : make_temp_dir(name);
    auto written = write_sysfs(topology, root);
    if (!written) {
        if (own) fs::remove_all(root);
        return fail(name, ": ", written.error());
    }
    auto state = std::make_shared<State>(name, std::move(topology), root, own);
    state->page = pci::page_bytes;

    // The BAR aperture: no IOVA or physical page may alias it.
    std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
    for (const auto& f : state->topology.functions())
        for (unsigned i = 0; i < f.spec.bars.size(); ++i)
            if (f.spec.bars[i].bytes) {
                lo = std::min(lo, f.bar_address[i]);
                hi = std::max(hi, f.bar_address[i] + f.spec.bars[i].bytes);
            }
    if (hi == 0) lo = hi = iova_end;
    state->aperture_start = lo;
    state->aperture_end = hi;
    add_less(state->frames, memory_start, hole_start, lo, hi);
    add_less(state->frames, hole_end, std::min(lo, iova_end), lo, hi);

    state->slots.resize(state->topology.functions().size());
    state->host_bridge_known = std::vector<std::atomic<std::uint8_t>>(state->slots.size() * state->slots.size());
    for (std::size_t i = 0; i < models.size(); ++i) {
        const std::size_t index = *at[i];
        const auto& f = state->topology.functions()[index];
        auto slot = std::make_unique<Slot>(*state, index, models[i].bus, models[i].model);
        slot->identity = slot->model->identity();
        slot->iommu = f.spec.iommu_group.has_value();
        slot->way.push_back(index);
        const auto& placed = f.physfn ? state->topology[*f.physfn] : f;  // a VF climbs from its PF's bus
        for (auto up = placed.upstream; up; up = state->topology[*up].upstream) slot->way.push_back(up->index);
        for (unsigned b = 0; b < slot->bars.size(); ++b) {
            const BarSpec& spec = f.spec.bars[b];
            if (!spec.bytes) continue;
            slot->bars[b] = pci::Bar{pci::DmaAddress{f.bar_address[b]}, spec.bytes, spec.prefetchable};
            slot->memory[b] = slot->model->memory(b);
            if (!slot->memory[b].empty() && slot->memory[b].size() < spec.bytes)
                throw std::invalid_argument("System::build: the model at " + slot->bus + " gives " +
                                            text::bytes(slot->memory[b].size()) + " of memory for BAR" +
                                            std::to_string(b) + " of " + text::bytes(spec.bytes));
        }
        slot->build_config(state->topology.config_space({index}));
        add_less(slot->domain.iovas, iova_start, msi_start, lo, hi);
        add_less(slot->domain.iovas, msi_end, iova_end, lo, hi);
        state->slots[index] = std::move(slot);
    }
    for (auto& s : state->slots)
        if (s)
            for (unsigned b = 0; b < s->bars.size(); ++b)
                if (s->bars[b]) state->bar_ranges.push_back({s->bars[b]->address.value, s->bars[b]->bytes, s.get(), b});
    for (auto& s : state->slots)
        if (s) {
            s->model->attach(s->port);
            s->attached = true;
        }

    auto transport = make_transport(state);
    auto ops = std::make_shared<SimOps>(state, std::move(transport));
    auto machine = pci::Machine::make(name, std::move(ops), root);
    return System(std::move(state), std::move(machine));
}

const pci::Machine& System::machine() const { return machine_; }
const Topology& System::topology() const { return state_->topology; }
const fs::path& System::sysfs() const { return state_->sysfs; }
std::uint64_t System::faults() const { return state_->fault_count; }

std::vector<Fault> System::recent_faults() const {
    std::lock_guard lock(state_->fault_mutex);
    return {state_->recent.begin(), state_->recent.end()};
}

Holdings System::holdings(std::string_view bus) const {
    Slot& s = state_->slot(bus);
    std::lock_guard hold(s.holdings_mutex);
    return {s.windows.size(), s.pins.size() + s.peers.size(), s.dmas.size()};
}

std::uint64_t System::memory_in_use() const {
    std::shared_lock lock(state_->memory_mutex);
    return state_->frames_in_use * state_->page;
}

}  // namespace rig::sim

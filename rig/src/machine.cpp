// Machines (rig/pci/machine.hpp): this computer, a sysfs tree under a root, or a
// transport's machine. Listing and reserving live here; the routes are route.cpp's.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "local_ops.hpp"
#include "machine_state.hpp"
#include "rig/pci/reservation.hpp"
#include "rig/text.hpp"
#include "sysfs.hpp"

namespace rig::pci {
namespace {

namespace fs = std::filesystem;

// An absolute root without a trailing separator, so that paths below it compare by prefix.
fs::path normal_root(const fs::path& root) {
    std::error_code ec;
    fs::path p = fs::absolute(root, ec);
    if (ec) p = root;
    p = p.lexically_normal();
    if (!p.has_filename() && p != p.root_path()) p = p.parent_path();
    return p;
}

std::uint64_t system_page() { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace

Machine Machine::local() {
    static const auto state =
        std::make_shared<const State>(State{State::Kind::Local, std::nullopt, local_ops(), fs::path("/")});
    return Machine(state);
}

Machine Machine::at(std::filesystem::path root) {
    return Machine(std::make_shared<const State>(State{State::Kind::Files, std::nullopt, nullptr, normal_root(root)}));
}

Machine Machine::make(std::string name, std::shared_ptr<Ops> ops, std::optional<std::filesystem::path> sysfs) {
    if (!ops) throw std::invalid_argument("Machine::make(\"" + name + "\"): no operations");
    if (sysfs) sysfs = normal_root(*sysfs);
    return Machine(std::make_shared<const State>(
        State{State::Kind::Transport, std::move(name), std::move(ops), std::move(sysfs)}));
}

std::optional<std::string> Machine::name() const { return state_->name; }

Claims& Machine::claims() const { return *state_->claims; }

std::optional<std::string> Machine::failed() const {
    if (state_->kind != State::Kind::Transport) return std::nullopt;
    return state_->ops->failed();
}

std::uint64_t Machine::page() const {
    return state_->kind == State::Kind::Transport ? state_->ops->page() : system_page();
}

Result<std::vector<Id>> Machine::functions() const {
    if (state_->kind != State::Kind::Transport) return sysfs::functions(*state_->root);
    if (auto why = state_->ops->failed()) return fail(*why);
    auto listed = state_->ops->functions();
    if (!listed) return listed;
    std::vector<std::pair<BusAddress, Id>> sorted;
    sorted.reserve(listed->size());
    for (auto& id : *listed) {
        const auto address = BusAddress::parse(id.bus);
        if (!address) return fail(*state_->name, ": the transport listed \"", id.bus, "\", which is not a bus address");
        sorted.emplace_back(*address, std::move(id));
    }
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Id> ids;
    ids.reserve(sorted.size());
    for (auto& [address, id] : sorted) ids.push_back(std::move(id));
    return ids;
}

Result<void> Machine::reserve(std::uintptr_t base, std::uint64_t bytes) const {
    const std::uint64_t size = page();
    if (bytes == 0 || size == 0 || base % size != 0 || bytes % size != 0 || base + bytes < base)
        throw std::invalid_argument(
            fmt::format("reserve: {} bytes at {} is not a range of whole {}-byte pages", bytes, text::hex(base), size));
    if (state_->kind != State::Kind::Transport) return reserve_addresses(base, bytes);
    if (auto why = state_->ops->failed()) return fail(*why);
    return state_->ops->reserve(base, bytes);
}

const std::shared_ptr<Ops>& Machine::ops() const { return state_->ops; }

const std::optional<std::filesystem::path>& Machine::root() const { return state_->root; }

}  // namespace rig::pci

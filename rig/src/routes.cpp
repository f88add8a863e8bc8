// Every pair's route from ways read once (rig/pci/routes.hpp). Reading costs one way per
// function (its node and its bridges, a few files each) and one CPU and representative per
// host bridge; a pair then costs its two ways' depth (route_rule.hpp), whatever the number
// of functions.
#include "rig/pci/routes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "route_rule.hpp"
#include "sysfs.hpp"

namespace rig::pci {

namespace {

void fs_clear(std::filesystem::path& p) { std::filesystem::path().swap(p); }

}  // namespace

struct Routes::State {
    std::vector<Id> ids;
    std::vector<BusAddress> addresses;  // of ids, for find()
    std::vector<std::optional<sysfs::Way>> ways;
    std::vector<std::string> unread;  // why a way could not be read
    std::vector<Link> links;
    std::vector<std::optional<int>> numa;
    RuleInputs inputs;
    // Each read way's steps, one flat array, and each function's leg into it: a pair's
    // answer touches a few dozen contiguous bytes however many functions there are.
    std::vector<Step> steps;
    struct Span {
        std::uint32_t first = 0, size = 0, host_bridge = 0;
    };
    std::vector<Span> legs;  // size 0: unread
    Leg leg(std::size_t f) const {
        const Span& s = legs[f];
        return {std::span<const Step>(steps).subspan(s.first, s.size), s.host_bridge};
    }

    void check(std::size_t f) const {
        if (f >= ids.size())
            throw std::invalid_argument(fmt::format("Routes: function index {} is not below {}", f, ids.size()));
    }
};

Result<Routes> Routes::read(const Machine& machine) {
    if (!machine.root())
        return fail(machine.name().value_or("machine"),
                    ": the transport sent no sysfs files, so every function is unread");
    auto ids = machine.functions();
    if (!ids) return std::unexpected(std::move(ids).error());
    auto state = std::make_shared<State>();
    const auto& root = *machine.root();
    state->ids = std::move(*ids);
    const std::size_t n = state->ids.size();
    state->addresses.reserve(n);
    state->ways.resize(n);
    state->unread.resize(n);
    state->links.resize(n);
    state->numa.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& bus = state->ids[i].bus;
        const auto address = BusAddress::parse(bus);
        if (!address) return fail("rig: the machine listed \"", bus, "\", which is not a bus address");
        state->addresses.push_back(*address);
        auto way = sysfs::read_way(root, bus);
        if (!way) {
            state->unread[i] = way.error();
            continue;
        }
        state->links[i] = way->nodes[0].link;
        state->numa[i] = sysfs::read_int(way->nodes[0].dir / "numa_node");
        state->ways[i] = std::move(*way);
    }
    std::vector<sysfs::Way*> ways;
    for (auto& way : state->ways)
        if (way) ways.push_back(&*way);
    const std::uint32_t host_bridges = number(ways);
    const std::vector<const sysfs::Way*> read(ways.begin(), ways.end());
    state->inputs = rule_inputs(root, read, host_bridges);
    // The directories did their work (numbering, the host bridges' facts): what is left
    // of a way is what a route explains, kept small so that many ways stay in cache.
    for (sysfs::Way* way : ways) {
        fs_clear(way->host_bridge_dir);
        for (sysfs::Node& node : way->nodes) fs_clear(node.dir);
    }
    {
        // Each way's nodes again, allocated one after the other in bus order, so that a row
        // of pairs reads its clients' ways as one stream rather than scattered between the
        // reading's freed buffers.
        std::vector<std::vector<sysfs::Node>> packed;
        packed.reserve(ways.size());
        for (const sysfs::Way* way : ways) packed.emplace_back(way->nodes);
        for (std::size_t i = 0; i < ways.size(); ++i) ways[i]->nodes.swap(packed[i]);
    }
    state->legs.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (!state->ways[i]) continue;
        const auto steps = steps_of(*state->ways[i]);
        state->legs[i] = {static_cast<std::uint32_t>(state->steps.size()), static_cast<std::uint32_t>(steps.size()),
                          state->ways[i]->host_bridge_id};
        state->steps.insert(state->steps.end(), steps.begin(), steps.end());
    }
    return Routes(std::move(state));
}

const std::vector<Id>& Routes::functions() const { return state_->ids; }

std::optional<std::size_t> Routes::find(std::string_view bus) const {
    const auto address = BusAddress::parse(bus);
    if (!address) return std::nullopt;
    const auto& a = state_->addresses;
    const auto it = std::lower_bound(a.begin(), a.end(), *address);
    if (it == a.end() || *it != *address) return std::nullopt;
    return static_cast<std::size_t>(it - a.begin());
}

Route Routes::route(std::size_t provider, std::size_t client) const {
    const State& s = *state_;
    s.check(provider);
    s.check(client);
    const std::string& p = s.ids[provider].bus;
    const std::string& c = s.ids[client].bus;
    for (const std::size_t f : {provider, client})
        if (!s.ways[f]) {
            Route r;
            r.provider = p;
            r.client = c;
            r.unread = s.unread[f];
            return r;
        }
    return decide(p, c, *s.ways[provider], *s.ways[client], s.inputs);
}

Verdict Routes::verdict(std::size_t provider, std::size_t client) const {
    const State& s = *state_;
    s.check(provider);
    s.check(client);
    if (s.legs[provider].size == 0 || s.legs[client].size == 0) return Verdict::Unread;  // unread
    return answer(s.leg(provider), s.leg(client), s.inputs).verdict;
}

std::optional<Distance> Routes::distance(std::size_t a, std::size_t b) const {
    const State& s = *state_;
    s.check(a);
    s.check(b);
    if (s.legs[a].size == 0 || s.legs[b].size == 0) return std::nullopt;  // unread
    return answer(s.leg(a), s.leg(b), s.inputs).distance;
}

const Link& Routes::link(std::size_t f) const {
    state_->check(f);
    return state_->links[f];
}

std::optional<int> Routes::numa_node(std::size_t f) const {
    state_->check(f);
    return state_->numa[f];
}

}  // namespace rig::pci

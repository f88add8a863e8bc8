// Which NIC for which GPU (rig/pci/nics.hpp): the ranking's four steps, ties, the pairing
// that spreads tied GPUs over tied NICs, and user overrides.
#include "rig/pci/nics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "rig/pci/address.hpp"
#include "rig/pci/names.hpp"

namespace rig::pci {
namespace {

// Step 2 as one number, nearest first.
int distance_class(const RankedNic& n) {
    if (!n.distance) return 5;
    switch (*n.distance) {
    case Distance::Switch: return 0;
    case Distance::Bridge: return 1;
    case Distance::System: return n.numa == Numa::Same ? 2 : n.numa == Numa::Unknown ? 3 : 4;
    }
    return 5;
}

// Steps 1-3 as a key that sorts the preferred first.
auto key(const RankedNic& n) {
    return std::tuple(!n.forwards, distance_class(n), n.bottleneck_bytes_per_second ? 0 : 1,
                      ~n.bottleneck_bytes_per_second.value_or(0));
}

Numa numa_of(std::optional<int> a, std::optional<int> b) {
    if (!a || !b || *a < 0 || *b < 0) return Numa::Unknown;
    return *a == *b ? Numa::Same : Numa::Other;
}

std::string why_of(const RankedNic& n, std::optional<int> gpu_numa) {
    std::string out = n.forwards ? "" : "not peer-to-peer, ";
    if (!n.distance) return out + "unread";
    switch (*n.distance) {
    case Distance::Switch: out += "switch " + n.common.value_or("?"); break;
    case Distance::Bridge: out += "bridge " + n.host_bridge; break;
    case Distance::System: out += "system"; break;
    }
    out += ", " + (n.bottleneck ? to_string(*n.bottleneck) : std::string("links unknown"));
    switch (n.numa) {
    case Numa::Same: out += fmt::format(", NUMA {}", *n.numa_node); break;
    case Numa::Other: out += fmt::format(", NUMA {} (the GPU's {})", *n.numa_node, *gpu_numa); break;
    case Numa::Unknown: out += ", NUMA unknown"; break;
    }
    return out;
}

std::string ordinal(std::size_t i) {
    const std::size_t n = i + 1;
    const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                         : n % 10 == 1                    ? "st"
                         : n % 10 == 2                    ? "nd"
                         : n % 10 == 3                    ? "rd"
                                                          : "th";
    return std::to_string(n) + suffix;
}

}  // namespace

std::vector<RankedNic> rank_nics(const Routes& routes, std::size_t function) {
    const auto& ids = routes.functions();
    if (function >= ids.size())
        throw std::invalid_argument(fmt::format("rank_nics: function index {} is not below {}", function, ids.size()));
    const auto gpu_numa = routes.numa_node(function);
    std::vector<std::pair<BusAddress, RankedNic>> ranked;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i == function || kind_of(ids[i]) != Kind::Nic) continue;
        const Route r = routes.route(function, i);  // the NIC's requests to the function's BAR
        RankedNic n;
        n.nic = ids[i].bus;
        n.forwards = r.forwards();
        n.distance = r.distance;
        n.numa_node = routes.numa_node(i);
        n.numa = numa_of(gpu_numa, n.numa_node);
        n.bottleneck = r.bottleneck;
        n.bottleneck_bytes_per_second = r.bottleneck_bytes_per_second();
        n.common = r.common;
        n.host_bridge = r.client_host_bridge;
        n.downtrained = r.downtrained();
        n.why = why_of(n, gpu_numa);
        ranked.emplace_back(*BusAddress::parse(n.nic), std::move(n));
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        return std::tuple(key(a.second), a.first) < std::tuple(key(b.second), b.first);
    });
    std::vector<RankedNic> out;
    out.reserve(ranked.size());
    for (auto& [address, n] : ranked) out.push_back(std::move(n));
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].tie =
            (i > 0 && key(out[i - 1]) == key(out[i])) || (i + 1 < out.size() && key(out[i + 1]) == key(out[i]));
    return out;
}

Result<std::vector<Override>> parse_overrides(std::string_view text) {
    std::vector<Override> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const char c = text[at];
        if (c == '#') {
            at = text.find('\n', at);
            if (at == std::string_view::npos) break;
            continue;
        }
        if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            ++at;
            continue;
        }
        std::size_t end = at;
        while (end < text.size() && text[end] != ',' && text[end] != ' ' && text[end] != '\t' && text[end] != '\n' &&
               text[end] != '\r' && text[end] != '#')
            ++end;
        const std::string_view entry = text.substr(at, end - at);
        at = end;
        const auto equals = entry.find('=');
        const auto gpu = equals == std::string_view::npos ? std::nullopt : normalize_address(entry.substr(0, equals));
        const auto nic = equals == std::string_view::npos ? std::nullopt : normalize_address(entry.substr(equals + 1));
        if (!gpu || !nic)
            return fail("\"", std::string(entry),
                        "\" is no GPU=NIC pair of bus addresses (as 0000:1b:00.0=0000:1c:00.0)");
        out.push_back({*gpu, *nic});
    }
    return out;
}

Result<std::vector<Pairing>> pair_nics(const Routes& routes, std::span<const Override> overrides) {
    const auto& ids = routes.functions();
    std::map<std::size_t, std::size_t> pinned;  // function -> NIC, by index
    for (const Override& o : overrides) {
        const auto gpu = routes.find(o.gpu);
        if (!gpu) return fail("override ", o.gpu, "=", o.nic, ": the machine has no function ", o.gpu);
        const auto nic = routes.find(o.nic);
        if (!nic) return fail("override ", o.gpu, "=", o.nic, ": the machine has no function ", o.nic);
        if (kind_of(ids[*nic]) != Kind::Nic)
            return fail(
                "override ", o.gpu, "=", o.nic, ": ", o.nic,
                fmt::format(" is no NIC: class {:#08x} ({})", ids[*nic].class_code, class_name(ids[*nic].class_code)));
        if (!pinned.emplace(*gpu, *nic).second)
            return fail("override ", o.gpu, "=", o.nic, ": ", o.gpu, " is pinned twice");
    }
    std::vector<std::size_t> functions;  // the GPUs and the pinned functions, in bus order
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (is_gpu(ids[i]) || pinned.count(i)) functions.push_back(i);

    std::vector<Pairing> out;
    // GPUs by the NICs that tie first in their ranking; a group is spread over its NICs.
    std::map<std::vector<std::string>, std::vector<std::size_t>> groups;  // NIC buses (bus order) -> positions in out
    for (const std::size_t f : functions) {
        Pairing p;
        p.gpu = ids[f].bus;
        p.ranked = rank_nics(routes, f);
        if (const auto pin = pinned.find(f); pin != pinned.end()) {
            p.nic = ids[pin->second].bus;
            p.overridden = true;
            p.why = "override";
        } else if (!p.ranked.empty()) {
            std::vector<std::pair<BusAddress, std::string>> first;
            for (const RankedNic& n : p.ranked) {
                if (key(n) != key(p.ranked.front())) break;
                first.emplace_back(*BusAddress::parse(n.nic), n.nic);
            }
            std::sort(first.begin(), first.end());
            std::vector<std::string> buses;
            for (auto& [address, bus] : first) buses.push_back(std::move(bus));
            groups[buses].push_back(out.size());
        } else {
            p.why = "the machine has no NIC";
        }
        out.push_back(std::move(p));
    }
    for (const auto& [nics, members] : groups)
        for (std::size_t i = 0; i < members.size(); ++i) {
            Pairing& p = out[members[i]];
            p.nic = nics[i % nics.size()];
            if (nics.size() == 1) p.why = "its first";
            else if (members.size() == 1) p.why = fmt::format("its first, in bus order of {} tied", nics.size());
            else
                p.why = fmt::format("spread: the {} of {} GPUs that rank the same {} NICs first takes the {}",
                                    ordinal(i), members.size(), nics.size(), ordinal(i % nics.size()));
        }
    return out;
}

std::string_view to_string(Numa n) {
    switch (n) {
    case Numa::Same: return "same";
    case Numa::Other: return "other";
    case Numa::Unknown: return "unknown";
    }
    return "unknown";
}

}  // namespace rig::pci

// rig/pci/routes.hpp: the routes between every pair of a machine's functions, from each
// function's way up read once.
//
// Machine::route reads both ways anew for each pair, which a tool asking every pair of a
// machine with thousands of functions (SR-IOV VFs) cannot afford. Routes reads each
// function's way up to its host bridge once, with its configuration space and link, the
// CPU and each host bridge's representative once, and answers each pair from the two
// ways: the common node is found by depth (hops from the root bus), comparing whole
// directories of one tree, so a pair costs the same on a machine of 50 functions as on
// one of 4000. The answers are those Machine::route gives on the files as they were read
// (route.cpp states the rule); read again to see ACS Control changed since.
//
// A Routes is an immutable value; copies share it and every member may be called from
// several threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "rig/pci/link.hpp"
#include "rig/pci/machine.hpp"
#include "rig/result.hpp"

namespace rig::pci {

class Routes {
public:
    // Reads every function of `machine` and its way up now. A function whose way cannot
    // be read is kept, unread (its routes say why, as Machine::route's). Error where the
    // machine has no sysfs files (a transport that sent none) or its functions cannot be
    // listed.
    static Result<Routes> read(const Machine& machine);

    // The functions, in bus order; an index below is a position in this list.
    const std::vector<Id>& functions() const;
    // The index of the function at `bus`, or nullopt where the machine has none.
    std::optional<std::size_t> find(std::string_view bus) const;

    // The route from `client`'s requests to a BAR of `provider`, explained, as
    // Machine::route gives it. Throws std::invalid_argument for an index not below
    // functions().size().
    Route route(std::size_t provider, std::size_t client) const;
    // Only what a matrix cell needs, without building text: route(p, c).verdict and
    // .distance. Same throws.
    Verdict verdict(std::size_t provider, std::size_t client) const;
    std::optional<Distance> distance(std::size_t a, std::size_t b) const;

    // The function's own link (an SR-IOV VF's is its PF's; link.hpp), LinkSource::Unread
    // where it is unread. Same throws.
    const Link& link(std::size_t f) const;
    // Its sysfs numa_node: -1 where the kernel gives none, nullopt where the file cannot
    // be read or the function is unread. Same throws.
    std::optional<int> numa_node(std::size_t f) const;

    struct State;

private:
    explicit Routes(std::shared_ptr<const State> state) : state_(std::move(state)) {}
    std::shared_ptr<const State> state_;
};

}  // namespace rig::pci

// Nic: open and close (rig/bnxt/nic.hpp); the steps are bringup.cpp's and teardown.cpp's.
#include <stdexcept>

#include "bringup.hpp"

namespace rig::bnxt {

Nic::State::State(pci::Function function, Options opts)
    : bus(function.bus()),
      fn(std::move(function)),
      options(std::move(opts)),
      clock(options.clock ? options.clock : steady_clock()) {}

Nic::State::~State() = default;

Nic::Nic(std::shared_ptr<State> state) : state_(std::move(state)) {}
Nic::Nic(Nic&&) noexcept = default;
Nic& Nic::operator=(Nic&& other) noexcept {
    if (this != &other) {
        if (state_) (void)close();
        state_ = std::move(other.state_);
    }
    return *this;
}
Nic::~Nic() {
    if (state_) (void)close();
}

Result<Nic> Nic::open(const pci::Machine& machine, std::string_view bus, Options options) {
    if (!options.address.empty() && !options.gids.empty())
        throw std::invalid_argument("rig::bnxt::Nic::open: Options::address and Options::gids both given; give one");
    auto fn = pci::Function::take(machine, bus);
    if (!fn) return std::unexpected(std::move(fn).error());
    auto state = std::make_shared<State>(std::move(*fn), std::move(options));
    std::lock_guard lock(state->mutex);
    if (auto up = bring_up(*state); !up) {
        std::optional<std::string> ignored;  // the bring-up error is the one to report
        state->teardown(ignored);
        state->closed.store(true, std::memory_order_release);
        state->fn.release();
        return std::unexpected(std::move(up).error());
    }
    return Nic(std::move(state));
}

Result<void> Nic::close() {
    if (!state_) return {};
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    if (s.closed.load(std::memory_order_acquire)) return {};
    std::optional<std::string> first_error;
    s.teardown(first_error);
    s.closed.store(true, std::memory_order_release);
    if (!s.fn.release() && !first_error)
        first_error = s.bus + ": bus mastering would not turn off, so the memory the NIC reached was not given back";
    s.kept.clear();
    s.kept_claims.clear();
    if (first_error) return std::unexpected(std::move(*first_error));
    return {};
}

bool Nic::closed() const { return !state_ || state_->closed.load(std::memory_order_acquire); }

namespace {
const Nic::State& live(const std::shared_ptr<Nic::State>& s) {
    if (!s) throw std::invalid_argument("rig::bnxt::Nic: a moved-from Nic");
    return *s;
}
}  // namespace

const std::string& Nic::bus() const { return live(state_).bus; }
const pci::Function& Nic::function() const { return live(state_).fn; }
const Limits& Nic::limits() const { return live(state_).limits; }
Mac Nic::mac() const { return live(state_).mac; }
Gid Nic::gid() const { return live(state_).gid; }
std::uint16_t Nic::gid_index() const { return live(state_).gid_index.value_or(0); }
const std::vector<GidEntry>& Nic::gids() const { return live(state_).gids; }
std::size_t Nic::gid_table_index() const { return live(state_).gid_chosen; }
Mtu Nic::mtu() const { return live(state_).mtu; }
const std::string& Nic::firmware() const { return live(state_).firmware; }
bool Nic::interrupts() const { return live(state_).interrupts; }

}  // namespace rig::bnxt

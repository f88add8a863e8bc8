// A stand-in for this computer's operations until the VFIO ones exist (issue 4 replaces
// this file): the page size and reservations are real; take() refuses every function.
#include "local_ops.hpp"

#include <unistd.h>

#include "rig/pci/reservation.hpp"

namespace rig::pci {
namespace {

class LocalOps final : public Ops {
public:
    std::optional<std::string> failed() const override { return std::nullopt; }
    std::uint64_t page() const override { return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)); }
    Result<std::vector<Id>> functions() override { return std::vector<Id>{}; }
    Result<std::unique_ptr<FunctionOps>> take(std::string_view bus) override {
        return fail(bus, ": VFIO is not available in this build yet");
    }
    Result<void> reserve(std::uintptr_t base, std::uint64_t bytes) override { return reserve_addresses(base, bytes); }
};

}  // namespace

std::shared_ptr<Ops> local_ops() {
    static const std::shared_ptr<Ops> ops = std::make_shared<LocalOps>();
    return ops;
}

}  // namespace rig::pci

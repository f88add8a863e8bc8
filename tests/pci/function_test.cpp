// Function's own logic on a recording transport: bounds, the capability walk, the PCI
// Express Device Control bits, the Command register, and takes that cannot be.
#include "rig/pci/function.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "../support/trees.hpp"
#include "rig/pci/config.hpp"
#include "rig/pci/transport.hpp"

namespace rig::pci {
namespace {

namespace cfg = config;

// A function whose configuration space is an array, every call written to a log.
struct Record {
    std::vector<std::string> log;
    std::array<std::uint8_t, 4096> config{};
    std::uint32_t get(std::uint32_t offset, unsigned bytes) const {
        std::uint32_t v = 0;
        for (unsigned i = 0; i < bytes; ++i) v |= std::uint32_t{config[offset + i]} << (8 * i);
        return v;
    }
    void put(std::uint32_t offset, unsigned bytes, std::uint32_t value) {
        for (unsigned i = 0; i < bytes; ++i) config[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
    }
};

class RecordingFunction final : public FunctionOps {
public:
    explicit RecordingFunction(std::shared_ptr<Record> r) : r_(std::move(r)) {}
    Addressing addressing() const override { return Addressing::Iommu; }
    bool inherited() const override { return false; }
    std::uint32_t config(std::uint32_t offset, unsigned bytes) override {
        r_->log.push_back("config " + std::to_string(offset) + " " + std::to_string(bytes));
        return r_->get(offset, bytes);
    }
    void set_config(std::uint32_t offset, unsigned bytes, std::uint32_t value) override {
        r_->log.push_back("set_config " + std::to_string(offset) + " " + std::to_string(bytes) + " " +
                          std::to_string(value));
        r_->put(offset, bytes, value);
    }
    std::optional<Bar> bar(unsigned index) override {
        r_->log.push_back("bar " + std::to_string(index));
        if (index == 0) return Bar{DmaAddress{0x4000'0000}, 0x10000, false};
        return std::nullopt;
    }
    Result<Window> map(unsigned, std::uint64_t, std::uint64_t, Caching) override { return fail("unused"); }
    void unmap(const Window&) override {}
    bool interrupt(unsigned, std::chrono::nanoseconds) override { return false; }
    Result<void> reset() override { return {}; }
    Result<void> forget() override { return {}; }
    Result<std::optional<Dma>> alloc_dma(Contiguity, std::optional<std::uintptr_t>, std::uint64_t,
                                         std::uint64_t) override {
        return fail("unused");
    }
    void free_dma(const Window&) override {}
    Result<std::optional<std::vector<Run>>> pin(std::uint64_t, std::uintptr_t, std::uint64_t) override {
        return fail("unused");
    }
    void unpin(std::uintptr_t, std::uint64_t) override {}
    Result<std::optional<DmaAddress>> map_peer(std::string_view provider, unsigned bar, std::uint64_t offset,
                                               std::uint64_t bytes, std::uint64_t below) override {
        r_->log.push_back("map_peer " + std::string(provider) + " " + std::to_string(bar) + " " +
                          std::to_string(offset) + " " + std::to_string(bytes) + " " + std::to_string(below));
        return std::optional(DmaAddress{0x7000'0000});
    }
    void unmap_peer(DmaAddress address, std::uint64_t bytes) override {
        r_->log.push_back("unmap_peer " + std::to_string(address.value) + " " + std::to_string(bytes));
    }
    bool release() override {
        r_->log.push_back("release");
        return true;
    }

private:
    std::shared_ptr<Record> r_;
};

class RecordingOps final : public Ops {
public:
    explicit RecordingOps(std::shared_ptr<Record> r) : r_(std::move(r)) {}
    std::optional<std::string> failed() const override { return std::nullopt; }
    std::uint64_t page() const override { return 4096; }
    Result<std::vector<Id>> functions() override { return std::vector<Id>{}; }
    Result<std::unique_ptr<FunctionOps>> take(std::string_view) override {
        return std::make_unique<RecordingFunction>(r_);
    }
    Result<void> reserve(std::uintptr_t, std::uint64_t) override { return {}; }

private:
    std::shared_ptr<Record> r_;
};

constexpr const char* bus = "0000:41:00.0";

struct Taken {
    std::shared_ptr<Record> record = std::make_shared<Record>();
    Function f;
};

// A function with a capability list 0x40 (PCI Express) -> 0x50 (MSI-X), as given.
Taken take(std::shared_ptr<Record> record = std::make_shared<Record>()) {
    const Machine m = Machine::make("rec", std::make_shared<RecordingOps>(record));
    auto f = Function::take(m, bus);
    if (!f) throw std::runtime_error(f.error());
    record->log.clear();
    return {record, *f};
}

std::shared_ptr<Record> with_capabilities() {
    auto r = std::make_shared<Record>();
    r->put(cfg::status, 2, cfg::status_capabilities_list);
    r->put(cfg::capabilities_pointer, 1, 0x40);
    r->put(0x40, 1, cfg::capability_pci_express);
    r->put(0x41, 1, 0x50);
    r->put(0x50, 1, cfg::capability_msix);
    r->put(0x51, 1, 0x00);
    r->put(0x40 + cfg::express_device_control, 2, 0x2810);  // MaxReadReq 512, RO on, NS on
    return r;
}

TEST(Function, TakeOnASysfsTreeIsAnError) {
    const test::Tree tree(test::OneSwitch{}.build());
    auto f = Function::take(tree.machine(), "0000:03:00.0");
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(), "0000:03:00.0: the machine is a sysfs tree (Machine::at) and its functions cannot be taken");
}

TEST(Function, TakeOfWhatIsNotABusAddressThrows) {
    const Machine m = Machine::make("rec", std::make_shared<RecordingOps>(std::make_shared<Record>()));
    EXPECT_THROW((void)Function::take(m, "41:00.0"), std::invalid_argument);
    EXPECT_THROW((void)Function::take(m, "0000:41:00.0 "), std::invalid_argument);
}

TEST(Function, TakeReadsEveryBarOnce) {
    auto record = std::make_shared<Record>();
    const Machine m = Machine::make("rec", std::make_shared<RecordingOps>(record));
    auto f = Function::take(m, bus);
    ASSERT_TRUE(f);
    EXPECT_EQ(record->log, (std::vector<std::string>{"bar 0", "bar 1", "bar 2", "bar 3", "bar 4", "bar 5"}));
    EXPECT_EQ(f->bar(0), (Bar{DmaAddress{0x4000'0000}, 0x10000, false}));
    EXPECT_EQ(f->bar(3), std::nullopt);
    EXPECT_EQ(record->log.size(), 6u);  // bar() answers from what the take read
}

TEST(Function, ConfigOutsideItsSpaceThrowsBeforeAnyCall) {
    auto t = take();
    EXPECT_THROW(t.f.config8(4096), std::invalid_argument);
    EXPECT_THROW(t.f.config16(4095), std::invalid_argument);
    EXPECT_THROW(t.f.config32(4094), std::invalid_argument);
    EXPECT_THROW(t.f.set_config32(0xffffffff, 0), std::invalid_argument);
    EXPECT_TRUE(t.record->log.empty());
}

TEST(Function, ConfigNotAlignedToItsWidthThrowsNamingTheFunction) {
    auto t = take();
    try {
        (void)t.f.config32(0x42);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "0000:41:00.0: configuration access of 4 bytes at 0x42 is not aligned to its width");
    }
    EXPECT_THROW(t.f.set_config16(0x41, 0), std::invalid_argument);
    EXPECT_TRUE(t.record->log.empty());
}

TEST(Function, ConfigAccessesPassTheirWidth) {
    auto t = take();
    t.record->put(0x100, 4, 0xa1b2c3d4);
    EXPECT_EQ(t.f.config8(0x103), 0xa1);
    EXPECT_EQ(t.f.config16(0x102), 0xa1b2);
    EXPECT_EQ(t.f.config32(0x100), 0xa1b2c3d4u);
    t.f.set_config16(0x100, 0x1122);
    EXPECT_EQ(t.record->get(0x100, 4), 0xa1b21122u);
    EXPECT_EQ(t.record->log.back(), "set_config 256 2 4386");
}

TEST(Function, CapabilityIsFoundByWalkingTheList) {
    auto t = take(with_capabilities());
    EXPECT_EQ(t.f.capability(cfg::capability_pci_express), 0x40u);
    EXPECT_EQ(t.f.capability(cfg::capability_msix), 0x50u);
    EXPECT_EQ(t.f.capability(0x05), std::nullopt);
}

TEST(Function, CapabilityWalkOfALoopingListEnds) {
    auto r = with_capabilities();
    r->put(0x51, 1, 0x40);  // 0x40 -> 0x50 -> 0x40 -> ...
    auto t = take(r);
    EXPECT_EQ(t.f.capability(0x05), std::nullopt);
    // Status, the pointer, then an ID and a next per step, at most 48 steps.
    EXPECT_LE(t.record->log.size(), 2u + 2 * 48);
    EXPECT_GE(t.record->log.size(), 2u + 2 * 48 - 1);
}

TEST(Function, CapabilityPointerBelowTheHeaderEndsTheWalk) {
    auto r = with_capabilities();
    r->put(0x41, 1, 0x3c);
    auto t = take(r);
    EXPECT_EQ(t.f.capability(cfg::capability_msix), std::nullopt);
}

TEST(Function, NoCapabilityListWithoutTheStatusBit) {
    auto r = with_capabilities();
    r->put(cfg::status, 2, 0);
    auto t = take(r);
    EXPECT_EQ(t.f.capability(cfg::capability_pci_express), std::nullopt);
}

TEST(Function, RelaxedOrderingIsBit4OfDeviceControl) {
    auto t = take(with_capabilities());
    EXPECT_EQ(t.f.relaxed_ordering(), true);
    ASSERT_TRUE(t.f.set_relaxed_ordering(false));
    EXPECT_EQ(t.record->get(0x48, 2), 0x2800u);
    EXPECT_EQ(t.record->log.back(), "set_config 72 2 10240");
    EXPECT_EQ(t.f.relaxed_ordering(), false);
}

TEST(Function, NoSnoopIsBit11OfDeviceControl) {
    auto t = take(with_capabilities());
    ASSERT_TRUE(t.f.set_no_snoop(false));
    EXPECT_EQ(t.record->get(0x48, 2), 0x2010u);
    ASSERT_TRUE(t.f.set_no_snoop(true));
    EXPECT_EQ(t.record->get(0x48, 2), 0x2810u);
}

TEST(Function, SettingABitAlreadySetWritesNothing) {
    auto t = take(with_capabilities());
    ASSERT_TRUE(t.f.set_no_snoop(true));
    for (const auto& line : t.record->log) EXPECT_NE(line.rfind("set_config", 0), 0u) << line;
}

TEST(Function, DeviceControlWithoutExpressCapabilityIsAnErrorNamingTheFunction) {
    auto t = take();
    auto r = t.f.set_relaxed_ordering(true);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:41:00.0: has no PCI Express capability");
    EXPECT_FALSE(t.f.no_snoop());
}

TEST(Function, BusMasterAndMemorySpaceAreCommandBits) {
    auto t = take();
    t.record->put(cfg::command, 2, 0x0400);
    t.f.set_bus_master(true);
    EXPECT_EQ(t.record->get(cfg::command, 2), 0x0404u);
    EXPECT_TRUE(t.f.bus_master());
    t.f.set_memory_space(true);
    EXPECT_EQ(t.record->get(cfg::command, 2), 0x0406u);
    t.f.set_bus_master(false);
    EXPECT_EQ(t.record->get(cfg::command, 2), 0x0402u);
    EXPECT_FALSE(t.f.bus_master());
}

TEST(Function, ReleaseTurnsBusMasteringOffThenReleases) {
    auto t = take();
    t.record->put(cfg::command, 2, 0x0406);
    EXPECT_TRUE(t.f.release());
    EXPECT_EQ(t.record->log, (std::vector<std::string>{"config 4 2", "set_config 4 2 1026", "release"}));
}

TEST(Function, ReleaseOfAFunctionReadingAllOnesWritesNoCommand) {
    auto t = take();
    t.record->put(cfg::command, 2, 0xffff);
    EXPECT_TRUE(t.f.release());
    EXPECT_EQ(t.record->log, (std::vector<std::string>{"config 4 2", "release"}));
}

TEST(Function, SetDmaBitsOutside32To64Throws) {
    auto t = take();
    EXPECT_THROW(t.f.set_dma_bits(31), std::invalid_argument);
    EXPECT_THROW(t.f.set_dma_bits(65), std::invalid_argument);
    t.f.set_dma_bits(32);
    t.f.set_dma_bits(64);
}

}  // namespace
}  // namespace rig::pci

// Regions (rig/bnxt/region.hpp; docs/api.md, "Region", every Error and
// invalid_argument case; docs/hsi.md §4.6.12, §6) on a NIC with and without an IOMMU.
#include "rig/bnxt/region.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "nic_machine.hpp"
#include "rig/pci/claim.hpp"
#include "rig/text.hpp"

namespace rig::bnxt::test {
namespace {

using hsi::Opcode;
using hsi::RcfwStatus;

struct Opened {
    explicit Opened(Iommu iommu = Iommu::Off, Routing routing = {}) : m("sim0", iommu, 1, Thread::Own, {}, routing) {
        auto n = m.open();
        if (!n) throw std::runtime_error(n.error());
        nic.emplace(std::move(*n));
    }
    SimMachine m;
    std::optional<Nic> nic;
};

struct FreeAligned {
    void operator()(std::byte* p) const { std::free(p); }
};
// The process's own memory, on a page.
std::unique_ptr<std::byte, FreeAligned> process_pages(std::size_t bytes) {
    return std::unique_ptr<std::byte, FreeAligned>(static_cast<std::byte*>(std::aligned_alloc(4096, bytes)));
}

class EitherAddressing : public ::testing::TestWithParam<Iommu> {};
INSTANTIATE_TEST_SUITE_P(Region, EitherAddressing, ::testing::Values(Iommu::Off, Iommu::On), [](const auto& p) {
    return p.param == Iommu::On ? std::string("Iommu") : std::string("Physical");
});

// ---- host ----

TEST(Region, HostOfZeroBytesThrows) {
    Opened o;
    EXPECT_THROW((void)Region::host(*o.nic, 0), std::invalid_argument);
}

TEST_P(EitherAddressing, HostIsZeroedRoundedToThePageAndKeepsWhatIsWritten) {
    Opened o(GetParam());
    auto r = Region::host(*o.nic, 5000);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->kind(), RegionKind::Host);
    EXPECT_EQ(r->bytes(), 8192u);
    std::vector<std::byte> back(8192, std::byte{0x77});
    r->read(0, back);
    EXPECT_EQ(back, std::vector<std::byte>(8192, std::byte{0}));
    const auto data = pattern(3000, 1);
    r->write(4000, data);
    std::vector<std::byte> got(3000);
    r->read(4000, got);
    EXPECT_EQ(got, data);
}

TEST(Region, HostKeysAndThePeersNameOfItsBytes) {
    Opened o;
    auto r = Region::host(*o.nic, 4096);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->lkey(), r->rkey());  // §6.1: one key for an MR
    EXPECT_NE(r->lkey(), hsi::reserved_lkey);
    EXPECT_EQ(r->remote(100), (Remote{r->address() + 100, r->rkey()}));
    EXPECT_THROW((void)r->remote(4097), std::invalid_argument);
}

TEST(Region, TwoRegionsHaveTwoKeys) {
    Opened o;
    auto a = Region::host(*o.nic, 4096);
    auto b = Region::host(*o.nic, 4096);
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->lkey(), b->lkey());
}

TEST(Region, HostLargerThanTheMachineHasIsAnErrorNamingTheSize) {
    Opened o;
    auto r = Region::host(*o.nic, std::uint64_t{1} << 50);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().rfind("host region: ", 0), 0u) << r.error();
    EXPECT_NE(r.error().find("0000:04:00.0"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("1 PiB"), std::string::npos) << r.error();
}

TEST_P(EitherAddressing, HostRefusedByTheFirmwareIsAnErrorAndGivesTheMemoryBack) {
    Opened o(GetParam());
    const auto before = o.nic->function().dma_allocations();
    o.m.faults.refuse(Opcode::REGISTER_MR, RcfwStatus::RESOURCES);
    auto r = Region::host(*o.nic, 4096);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: the firmware refused REGISTER_MR (status 2: RESOURCES)");
    EXPECT_EQ(o.nic->function().dma_allocations(), before);
}

TEST(Region, HostWhoseKeyIsRefusedIsAnError) {
    Opened o;
    o.m.faults.refuse(Opcode::ALLOCATE_MRW, RcfwStatus::RESOURCES);
    auto r = Region::host(*o.nic, 4096);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: the firmware refused ALLOCATE_MRW (status 2: RESOURCES)");
}

TEST(Region, ReadOrWriteOutsideTheRegionThrows) {
    Opened o;
    auto r = Region::host(*o.nic, 4096);
    ASSERT_TRUE(r);
    std::vector<std::byte> buffer(16);
    EXPECT_THROW(r->read(4090, buffer), std::invalid_argument);
    EXPECT_THROW(r->write(4081, buffer), std::invalid_argument);
    EXPECT_THROW(r->read(~std::uint64_t{0}, buffer), std::invalid_argument);
    EXPECT_NO_THROW(r->read(4080, buffer));
}

// ---- pages ----

TEST(Region, PagesOfNoBytesThrows) {
    Opened o;
    EXPECT_THROW((void)Region::pages(*o.nic, {}), std::invalid_argument);
}

TEST(Region, PagesNotOnAPageThrows) {
    Opened o;
    auto memory = process_pages(8192);
    EXPECT_THROW((void)Region::pages(*o.nic, std::span(memory.get() + 8, 4096)), std::invalid_argument);
}

TEST(Region, PagesOfProcessMemoryOnANicWithoutIommuIsAnError) {
    Opened o(Iommu::Off);
    auto memory = process_pages(8192);
    auto r = Region::pages(*o.nic, std::span(memory.get(), 8192));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("0000:04:00.0: cannot pin 8 KiB at "), std::string::npos) << r.error();
    EXPECT_EQ(o.nic->function().pins(), 0u);
}

TEST(Region, PagesOfProcessMemoryBehindAnIommuArePinnedUntilDeregistered) {
    Opened o(Iommu::On);
    auto memory = process_pages(3 * 4096);
    auto r = Region::pages(*o.nic, std::span(memory.get(), 3 * 4096));
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->kind(), RegionKind::Pages);
    EXPECT_EQ(r->bytes(), 3 * 4096u);
    EXPECT_EQ(r->address(), reinterpret_cast<std::uintptr_t>(memory.get()));
    EXPECT_EQ(o.nic->function().pins(), 1u);
    ASSERT_TRUE(r->deregister());
    EXPECT_EQ(o.nic->function().pins(), 0u);
}

TEST(Region, PagesOfAllocDmaMemoryOnANicWithoutIommuIsARegion) {
    Opened o(Iommu::Off);
    auto dma = o.nic->function().alloc_dma(8192);
    ASSERT_TRUE(dma) << dma.error();
    ASSERT_TRUE(dma->window.is_mapped());
    auto r = Region::pages(*o.nic, std::span(dma->window.data(), 8192));
    ASSERT_TRUE(r) << r.error();
    ASSERT_TRUE(r->deregister());
    o.nic->function().free_dma(*dma);
}

TEST(Region, PagesRefusedByTheFirmwareIsAnErrorAndUnpinsThem) {
    Opened o(Iommu::On);
    auto memory = process_pages(4096);
    o.m.faults.refuse(Opcode::REGISTER_MR, RcfwStatus::RESOURCES);
    auto r = Region::pages(*o.nic, std::span(memory.get(), 4096));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: the firmware refused REGISTER_MR (status 2: RESOURCES)");
    EXPECT_EQ(o.nic->function().pins(), 0u);
}

TEST(Region, ReadOfAPagesRegionThrows) {
    Opened o(Iommu::On);
    auto memory = process_pages(4096);
    auto r = Region::pages(*o.nic, std::span(memory.get(), 4096));
    ASSERT_TRUE(r) << r.error();
    std::vector<std::byte> buffer(8);
    EXPECT_THROW(r->read(0, buffer), std::invalid_argument);
    EXPECT_THROW(r->write(0, buffer), std::invalid_argument);
}

// ---- device ----

TEST(Region, DeviceWithoutRunsThrows) {
    Opened o;
    EXPECT_THROW((void)Region::device(*o.nic, {}), std::invalid_argument);
}

TEST(Region, DeviceRunOfZeroBytesThrows) {
    Opened o;
    const std::vector<pci::Run> runs = {{pci::DmaAddress{0x40'0000'0000}, 0}};
    EXPECT_THROW((void)Region::device(*o.nic, runs), std::invalid_argument);
}

TEST(Region, DeviceRunAddressNotPageMultipleThrows) {
    Opened o;
    const std::vector<pci::Run> runs = {{pci::DmaAddress{0x40'0000'0800}, 4096}};
    EXPECT_THROW((void)Region::device(*o.nic, runs), std::invalid_argument);
}

TEST(Region, DeviceRunSizeNotPageMultipleThrows) {
    Opened o;
    const std::vector<pci::Run> runs = {{pci::DmaAddress{0x40'0000'0000}, 4096},
                                        {pci::DmaAddress{0x40'0001'0000}, 100}};
    EXPECT_THROW((void)Region::device(*o.nic, runs), std::invalid_argument);
}

// Below one switch without ACS the switch carries the NIC's requests straight to the BAR
// (PCI_P2PDMA_MAP_BUS_ADDR): bus addresses, nothing mapped, behind an IOMMU too.
TEST_P(EitherAddressing, DeviceDirectBelowASwitchUsesTheBusAddresses) {
    Opened o(GetParam());
    const auto runs = o.m.gpu_runs(near_gpu_bus, 64 << 10, 1 << 20);
    auto r = Region::device(*o.nic, runs);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->address(), runs[0].address.value);
    EXPECT_EQ(o.nic->function().pins(), 0u);
    EXPECT_EQ(o.m.system.holdings(nic_bus).pins, 0u);
}

// Through a host bridge that carries peer requests (ACS redirect on the switch ports, an
// AMD Zen root complex): behind an IOMMU the NIC's domain maps the BAR at IOVAs, counted
// with its pins and unmapped by deregister.
TEST(Region, DeviceThroughTheHostBridgeBehindAnIommuMapsTheBar) {
    Opened o(Iommu::On, Routing::redirect_to_allowed());
    const auto runs = o.m.gpu_runs(near_gpu_bus, 64 << 10, 1 << 20);
    ASSERT_EQ(o.m.machine().route(near_gpu_bus, nic_bus).verdict, pci::Verdict::ThroughHostBridge);
    auto r = Region::device(*o.nic, runs);
    ASSERT_TRUE(r) << r.error();
    EXPECT_NE(r->address(), runs[0].address.value) << "an IOVA of the NIC's domain";
    EXPECT_EQ(r->bytes(), 1u << 20);
    EXPECT_EQ(o.nic->function().pins(), 1u);
    EXPECT_EQ(o.m.system.holdings(nic_bus).pins, 1u);
    ASSERT_TRUE(r->deregister());
    EXPECT_EQ(o.nic->function().pins(), 0u);
    EXPECT_EQ(o.m.system.holdings(nic_bus).pins, 0u);
}

TEST(Region, DeviceThroughTheHostBridgeAtPhysicalAddressesUsesTheBusAddresses) {
    Opened o(Iommu::Off, Routing::redirect_to_allowed());
    const auto runs = o.m.gpu_runs(far_gpu_bus, 0, 65536);
    auto r = Region::device(*o.nic, runs);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->address(), runs[0].address.value);
    EXPECT_EQ(o.nic->function().pins(), 0u);
}

TEST(Region, DeviceMappingsGoBackWithTheNicsClose) {
    Opened o(Iommu::On, Routing::redirect_to_allowed());
    auto r = Region::device(*o.nic, o.m.gpu_runs(far_gpu_bus, 0, 65536));
    ASSERT_TRUE(r) << r.error();
    ASSERT_EQ(o.m.system.holdings(nic_bus).pins, 1u);
    ASSERT_TRUE(o.nic->close());
    EXPECT_EQ(o.m.system.holdings(nic_bus), (rig::sim::Holdings{}));
}

// B12: a BAR the bus does not carry the NIC's requests to is refused before anything is
// registered, naming the host bridge that refuses (no common bridge: two root ports of a
// Broadwell-EP host bridge), not registered to fail the first transfer.
TEST_P(EitherAddressing, DeviceWhereTheBusDoesNotForwardIsRefusedNamingTheHostBridge) {
    Opened o(GetParam());
    o.m.faults.refuse(Opcode::ALLOCATE_MRW, RcfwStatus::FAIL);  // reached only if registration were tried
    auto r = Region::device(*o.nic, o.m.gpu_runs(far_gpu_bus, 0, 65536));
    ASSERT_FALSE(r);
    EXPECT_TRUE(
        r.error().starts_with("0000:04:00.0: the bus does not carry the NIC's requests to 0000:05:00.0 BAR0, "
                              "so the run of 64 KiB at "))
        << r.error();
    EXPECT_NE(r.error().find("not supported (PCI_P2PDMA_MAP_NOT_SUPPORTED)"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("pci0000:00's first device 0000:00:00.0 (8086:6f00) is not in the allow-list"),
              std::string::npos)
        << r.error();
    EXPECT_EQ(o.nic->function().pins(), 0u);
}

// ACS redirect on the switch ports to that host bridge: refused too, naming the ports.
TEST(Region, DeviceWhereAcsRedirectsToAHostBridgeNotAllowedIsRefusedNamingTheBridges) {
    Opened o(Iommu::On, Routing::redirect_to_refused());
    auto r = Region::device(*o.nic, o.m.gpu_runs(near_gpu_bus, 0, 65536));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().find("0000:02:08.0 ACSCtl 0x001d (ReqRedir CmpltRedir)"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("pci=disable_acs_redir=0000:02:08.0;0000:02:10.0"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("(8086:6f00) is not in the allow-list"), std::string::npos) << r.error();
    EXPECT_EQ(o.nic->function().pins(), 0u);
}

TEST(Region, DeviceRunInNoBarIsAnError) {
    Opened o;
    const std::vector<pci::Run> runs = {{pci::DmaAddress{0x1000'0000}, 4096}};
    auto r = Region::device(*o.nic, runs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(),
              "0000:04:00.0: the run of 4 KiB at 0x10000000 lies in no BAR of a function of the machine "
              "(sysfs resource)");
}

TEST(Region, DeviceRunPastItsBarsEndIsAnError) {
    Opened o;
    auto runs = o.m.gpu_runs(near_gpu_bus, gpu_bytes - 4096, 8192);
    auto r = Region::device(*o.nic, runs);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: the run of 8 KiB at " + text::hex(runs[0].address.value) +
                             " runs past the end of 0000:03:00.0 BAR0 (4 MiB at " +
                             text::hex(runs[0].address.value - (gpu_bytes - 4096)) + ")");
}

// A refusal of a later run gives back what earlier runs mapped.
TEST(Region, DeviceRefusedPartWayUnmapsWhatItMapped) {
    Opened o(Iommu::On, Routing::redirect_to_allowed());
    auto runs = o.m.gpu_runs(near_gpu_bus, 0, 65536);
    runs.push_back({pci::DmaAddress{0x1000'0000}, 4096});
    auto r = Region::device(*o.nic, runs);
    ASSERT_FALSE(r);
    EXPECT_EQ(o.nic->function().pins(), 0u);
    EXPECT_EQ(o.m.system.holdings(nic_bus).pins, 0u);
}

TEST(Region, DeviceOverAPeersBarIsARegion) {
    Opened o(Iommu::Off);
    const auto runs = o.m.gpu_runs(near_gpu_bus, 1 << 20, 2 << 20);
    auto r = Region::device(*o.nic, runs);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->kind(), RegionKind::Device);
    EXPECT_EQ(r->bytes(), 2u << 20);
    EXPECT_EQ(r->address(), runs[0].address.value);
    std::vector<std::byte> buffer(8);
    EXPECT_THROW(r->read(0, buffer), std::invalid_argument);  // not of host
}

TEST(Region, DeviceRefusedByTheFirmwareIsAnError) {
    Opened o(Iommu::Off);
    o.m.faults.refuse(Opcode::REGISTER_MR, RcfwStatus::INVALID_PARAMETER);
    auto r = Region::device(*o.nic, o.m.gpu_runs(near_gpu_bus, 0, 4096));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), "0000:04:00.0: the firmware refused REGISTER_MR (status 5: INVALID_PARAMETER)");
}

// ---- claims (B18, docs/bugs.md): what a region covers, its owner may not free ----

pci::Span span_of(const pci::Run& run) { return {run.address.value, run.bytes}; }

TEST_P(EitherAddressing, DeviceClaimsItsRunsOnTheMachineUntilDeregistered) {
    Opened o(GetParam());
    const auto runs = o.m.gpu_runs(near_gpu_bus, 64 << 10, 1 << 20);
    auto r = Region::device(*o.nic, runs);
    ASSERT_TRUE(r) << r.error();
    const auto claimed = o.m.machine().claims().claimed(span_of(runs[0]));
    ASSERT_TRUE(claimed);
    EXPECT_EQ(claimed->by, "the device region of 1 MiB of NIC 0000:04:00.0");
    EXPECT_EQ(claimed->span, span_of(runs[0]));
    ASSERT_TRUE(r->deregister());
    EXPECT_FALSE(o.m.machine().claims().claimed(span_of(runs[0])));
}

TEST(Region, DeviceThroughTheHostBridgeClaimsTheBusAddressesNotTheIovas) {
    Opened o(Iommu::On, Routing::redirect_to_allowed());
    const auto runs = o.m.gpu_runs(near_gpu_bus, 0, 65536);
    auto r = Region::device(*o.nic, runs);
    ASSERT_TRUE(r) << r.error();
    EXPECT_TRUE(o.m.machine().claims().claimed(span_of(runs[0])));
    EXPECT_FALSE(o.m.machine().claims().claimed({r->address(), 65536}));
}

TEST(Region, DeviceRefusedClaimsNothing) {
    Opened o(Iommu::Off);
    o.m.faults.refuse(Opcode::REGISTER_MR, RcfwStatus::INVALID_PARAMETER);
    const auto runs = o.m.gpu_runs(near_gpu_bus, 0, 4096);
    ASSERT_FALSE(Region::device(*o.nic, runs));
    EXPECT_FALSE(o.m.machine().claims().claimed(span_of(runs[0])));
}

TEST(Region, PagesClaimsItsBytesInTheProcessUntilDeregistered) {
    Opened o(Iommu::On);
    auto memory = process_pages(3 * 4096);
    const pci::Span span{reinterpret_cast<std::uintptr_t>(memory.get()), 3 * 4096};
    auto r = Region::pages(*o.nic, std::span(memory.get(), 3 * 4096));
    ASSERT_TRUE(r) << r.error();
    const auto claimed = pci::process_claims().claimed(span);
    ASSERT_TRUE(claimed);
    EXPECT_EQ(claimed->by, "the pages region of 12 KiB of NIC 0000:04:00.0");
    ASSERT_TRUE(r->deregister());
    EXPECT_FALSE(pci::process_claims().claimed(span));
}

TEST(Region, RefusedDeregisterKeepsTheClaimUntilClose) {
    Opened o(Iommu::Off);
    const auto runs = o.m.gpu_runs(near_gpu_bus, 0, 65536);
    auto r = Region::device(*o.nic, runs);
    ASSERT_TRUE(r) << r.error();
    o.m.faults.refuse(Opcode::DEREGISTER_MR, RcfwStatus::FAIL);
    EXPECT_FALSE(r->deregister());
    { Region gone = std::move(*r); }  // the NIC may still write the memory
    EXPECT_TRUE(o.m.machine().claims().claimed(span_of(runs[0])));
    ASSERT_TRUE(o.nic->close());
    EXPECT_FALSE(o.m.machine().claims().claimed(span_of(runs[0])));
}

TEST(Region, CloseGivesUpTheClaimsOfTheRegionsItDeregisters) {
    Opened o(Iommu::On);
    const auto runs = o.m.gpu_runs(near_gpu_bus, 0, 65536);
    auto memory = process_pages(4096);
    auto device = Region::device(*o.nic, runs);
    auto pages = Region::pages(*o.nic, std::span(memory.get(), 4096));
    ASSERT_TRUE(device && pages);
    ASSERT_TRUE(o.nic->close());
    EXPECT_FALSE(o.m.machine().claims().claimed(span_of(runs[0])));
    EXPECT_FALSE(pci::process_claims().claimed({reinterpret_cast<std::uintptr_t>(memory.get()), 4096}));
}

// ---- deregister ----

TEST_P(EitherAddressing, DeregisterGivesTheMemoryBackAndEndsReadAndWrite) {
    Opened o(GetParam());
    const auto before = o.nic->function().dma_allocations();
    auto r = Region::host(*o.nic, 4096);
    ASSERT_TRUE(r) << r.error();
    EXPECT_GT(o.nic->function().dma_allocations(), before);
    ASSERT_TRUE(r->deregister());
    EXPECT_TRUE(r->deregistered());
    EXPECT_EQ(o.nic->function().dma_allocations(), before);
    std::vector<std::byte> buffer(8);
    EXPECT_THROW(r->read(0, buffer), std::invalid_argument);
    EXPECT_THROW(r->write(0, buffer), std::invalid_argument);
    EXPECT_TRUE(r->deregister());  // again: nothing to do
}

TEST(Region, LastHandleGoingDeregisters) {
    Opened o;
    const auto before = o.nic->function().dma_allocations();
    {
        auto r = Region::host(*o.nic, 4096);
        ASSERT_TRUE(r);
        Region copy = *r;
    }
    EXPECT_EQ(o.nic->function().dma_allocations(), before);
}

// docs/api.md, "Region": after a refused deregister every later call is an Error, and the memory
// stays allocated and pinned until the NIC closes.
TEST_P(EitherAddressing, RefusedDeregisterKeepsTheMemoryUntilClose) {
    Opened o(GetParam());
    auto r = Region::host(*o.nic, 4096);
    ASSERT_TRUE(r) << r.error();
    const auto held = o.nic->function().dma_allocations();
    o.m.faults.refuse(Opcode::DEREGISTER_MR, RcfwStatus::FAIL);
    auto first = r->deregister();
    ASSERT_FALSE(first);
    EXPECT_EQ(first.error(), "0000:04:00.0: the firmware refused DEREGISTER_MR (status 1: FAIL)");
    auto second = r->deregister();
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error(),
              "0000:04:00.0: the host region of 4 KiB could not be deregistered earlier; its memory "
              "stays allocated and pinned until the NIC closes");
    EXPECT_FALSE(r->deregistered());
    EXPECT_EQ(o.nic->function().dma_allocations(), held);
    ASSERT_TRUE(o.nic->close());
    EXPECT_EQ(o.m.system.holdings(nic_bus), (rig::sim::Holdings{}));
    EXPECT_EQ(o.m.system.memory_in_use(), 0u);
}

TEST(Region, RefusedDeregisterOfPagesKeepsThemPinnedUntilClose) {
    Opened o(Iommu::On);
    auto memory = process_pages(4096);
    auto r = Region::pages(*o.nic, std::span(memory.get(), 4096));
    ASSERT_TRUE(r) << r.error();
    o.m.faults.refuse(Opcode::DEREGISTER_MR, RcfwStatus::FAIL);
    EXPECT_FALSE(r->deregister());
    EXPECT_FALSE(r->deregister());
    EXPECT_EQ(o.nic->function().pins(), 1u);
    { Region gone = std::move(*r); }  // the handle going changes nothing
    EXPECT_EQ(o.nic->function().pins(), 1u);
    ASSERT_TRUE(o.nic->close());
    EXPECT_EQ(o.m.system.holdings(nic_bus), (rig::sim::Holdings{}));
}

TEST(Region, UnansweredDeregisterTimesOutAndKeepsTheMemoryUntilClose) {
    SimMachine m("sim0", Iommu::Off, 1, Thread::Stepped);
    auto nic = m.open(stepped_options(m));
    ASSERT_TRUE(nic) << nic.error();
    auto r = Region::host(*nic, 4096);
    ASSERT_TRUE(r) << r.error();
    const auto held = nic->function().dma_allocations();
    m.faults.drop(Opcode::DEREGISTER_MR);
    auto first = r->deregister();
    ASSERT_FALSE(first);
    EXPECT_EQ(first.error(), "0000:04:00.0: DEREGISTER_MR timed out after 500 ms");
    EXPECT_FALSE(r->deregister());
    EXPECT_EQ(nic->function().dma_allocations(), held);
    (void)nic->close();
    EXPECT_EQ(m.system.holdings(nic_bus), (rig::sim::Holdings{}));
}

TEST(Region, CloseDeregistersWhatTheCallerLeftAndEndsIt) {
    Opened o;
    auto r = Region::host(*o.nic, 4096);
    ASSERT_TRUE(r) << r.error();
    ASSERT_TRUE(o.nic->close());
    EXPECT_TRUE(r->deregistered());
    EXPECT_TRUE(r->deregister());
    std::vector<std::byte> buffer(8);
    EXPECT_THROW(r->read(0, buffer), std::invalid_argument);
    EXPECT_THROW((void)Region::host(*o.nic, 4096), std::invalid_argument);
    EXPECT_EQ(o.m.system.holdings(nic_bus), (rig::sim::Holdings{}));
}

}  // namespace
}  // namespace rig::bnxt::test

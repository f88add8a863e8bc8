// Nic::open and close on a simulated machine with a bnxt model (rig/bnxt/nic.hpp;
// docs/hsi.md §3, §4, §7.1, §7.4; docs/bugs.md B19, B25): bring-up and teardown leave
// nothing behind, and every firmware fault the model can be told to make (refuse, never
// answer, answer with a stale sequence number or cookie, answer short) gives its Error,
// naming the bus address and the command, and a clean close.
#include "rig/bnxt/nic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nic_machine.hpp"
#include "rig/sim/faults.hpp"

namespace rig::bnxt::test {
namespace {

using hsi::HwrmError;
using hsi::Opcode;
using hsi::RcfwStatus;
using hsi::ReqType;

// Nothing the NIC's function took is left: no window, pin or DMA memory, and the machine
// gives no memory to anyone.
void expect_all_given_back(const SimMachine& m) {
    EXPECT_EQ(m.system.holdings(nic_bus), (rig::sim::Holdings{}));
    EXPECT_EQ(m.system.memory_in_use(), 0u);
}

// A machine stepped by the driver's own waits, so that the model's answers (or their
// absence) come in a fixed order and a timeout costs no wall-clock time.
struct Stepped {
    SimMachine m{"sim0", Iommu::Off, 1, Thread::Stepped};
    Options options() const { return stepped_options(m); }
};

TEST(Nic, OpenBringsTheNicUpAndCloseGivesEverythingBack) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_EQ(nic->bus(), nic_bus);
    EXPECT_EQ(nic->mac(), (Mac{0x02, 0, 0, 0, 0, 0x01}));
    // The default address, of RFC 5737's documentation block, at index 1 after the
    // link-local GID, as rxe lays out a port's GIDs.
    EXPECT_EQ(to_string(nic->gid()), "::ffff:192.0.2.1");
    EXPECT_EQ(nic->gid_index(), 1u);
    EXPECT_EQ(nic->limits().max_qp, 1024u);
    EXPECT_EQ(nic->limits().max_qp_wr, 4095u);  // QUERY_FUNC's 4096, less the ring's spare entry
    EXPECT_EQ(nic->limits().max_inline_data, 96u);
    EXPECT_EQ(nic->firmware().find("RoCE 1.8.6") != std::string::npos, true) << nic->firmware();
    EXPECT_TRUE(nic->interrupts());
    EXPECT_GT(nic->function().dma_allocations(), 0u);
    ASSERT_TRUE(nic->close());
    EXPECT_TRUE(nic->closed());
    expect_all_given_back(m);
}

TEST(Nic, OpenTurnsRelaxedOrderingOffAndBusMasteringOn) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_EQ(nic->function().relaxed_ordering(), Result<bool>(false));
    EXPECT_TRUE(nic->function().bus_master());
}

TEST(Nic, OpenAndClose100TimesLeavesNothingBehind) {
    SimMachine m("sim0");
    std::size_t dma_while_open = 0;
    for (int i = 0; i < 100; ++i) {
        auto nic = m.open();
        ASSERT_TRUE(nic) << "round " << i << ": " << nic.error();
        if (i == 0) dma_while_open = nic->function().dma_allocations();
        ASSERT_EQ(nic->function().dma_allocations(), dma_while_open) << "round " << i;
        ASSERT_TRUE(nic->close()) << "round " << i;
        ASSERT_EQ(m.system.holdings(nic_bus), (rig::sim::Holdings{})) << "round " << i;
        ASSERT_EQ(m.system.memory_in_use(), 0u) << "round " << i;
    }
}

TEST(Nic, OpenBehindAnIommuReachesMemoryThroughIt) {
    SimMachine m("sim0", Iommu::On);
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_EQ(nic->function().addressing(), pci::Addressing::Iommu);
    ASSERT_TRUE(nic->close());
    expect_all_given_back(m);
}

// The driver writes its queues and reads its completions in place: DMA memory a machine
// hands out unmapped (reached through a transport) is refused at open, naming the
// function, and what was taken is given back.
TEST(Nic, OpenWhereDmaMemoryIsNotMappedIsAnErrorNamingTheFunction) {
    SimMachine m("sim0");
    rig::sim::Faults machine_faults(m.system);
    machine_faults.unmapped_dma();
    auto nic = m.open();
    ASSERT_FALSE(nic);
    EXPECT_NE(nic.error().find(std::string(nic_bus) + ": the machine's DMA memory is not mapped into this process"),
              std::string::npos)
        << nic.error();
    EXPECT_EQ(m.system.holdings(nic_bus), rig::sim::Holdings{});
    EXPECT_EQ(machine_faults.double_give_backs(), 0u);
}

TEST(Nic, CloseTwiceIsOk) {
    SimMachine m("sim0");
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_TRUE(nic->close());
    EXPECT_TRUE(nic->close());
}

TEST(Nic, DestructorClosesTheNic) {
    SimMachine m("sim0");
    {
        auto nic = m.open();
        ASSERT_TRUE(nic) << nic.error();
    }
    expect_all_given_back(m);
}

TEST(Nic, OpenOfANonexistentFunctionIsAnErrorNamingIt) {
    SimMachine m("sim0");
    auto nic = Nic::open(m.machine(), "0000:09:00.0");
    ASSERT_FALSE(nic);
    EXPECT_NE(nic.error().find("0000:09:00.0"), std::string::npos) << nic.error();
}

TEST(Nic, OpenOfAnotherDevicesFunctionIsAnErrorAndWritesNothingToIt) {
    SimMachine m("sim0");
    const auto memory = m.gpu_memory(m.near_gpu);
    std::fill(memory.begin(), memory.begin() + 4096, std::byte{0x5a});
    auto nic = Nic::open(m.machine(), near_gpu_bus);
    ASSERT_FALSE(nic);
    EXPECT_EQ(nic.error().rfind("0000:03:00.0: not a Broadcom network function (vendor 0x", 0), 0u) << nic.error();
    EXPECT_TRUE(std::all_of(memory.begin(), memory.begin() + 4096, [](std::byte b) { return b == std::byte{0x5a}; }));
}

TEST(Nic, GivenIpv4AddressIsTheGid) {
    SimMachine m("sim0");
    Options o;
    o.gids = {{link_local_gid(Mac{2, 0, 0, 0, 0, 1}), RoceVersion::V2}, {ipv4_gid(10, 0, 0, 1), RoceVersion::V2}};
    auto nic = m.open(o);
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_EQ(nic->gid(), ipv4_gid(10, 0, 0, 1));
    EXPECT_EQ(nic->gid_index(), 1u);
}

TEST(Nic, AddressOptionIsTheGidAtIndexOneAfterTheLinkLocalOne) {
    SimMachine m("sim0");
    Options o;
    o.address = "10.77.0.4";
    auto nic = m.open(o);
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_EQ(to_string(nic->gid()), "::ffff:10.77.0.4");
    EXPECT_EQ(nic->gid_index(), 1u);
    o.address = "2001:db8::7";
    ASSERT_TRUE(nic->close());
    auto v6 = m.open(o);
    ASSERT_TRUE(v6) << v6.error();
    EXPECT_EQ(to_string(v6->gid()), "2001:db8::7");
    EXPECT_EQ(v6->gid_index(), 1u);
}

TEST(Nic, AddressOptionThatIsNoAddressIsAnErrorNamingIt) {
    SimMachine m("sim0");
    Options o;
    o.address = "10.77.0";
    auto nic = m.open(o);
    ASSERT_FALSE(nic);
    EXPECT_EQ(nic.error(),
              "0000:04:00.0: Options::address \"10.77.0\" is neither an IPv4 nor an IPv6 address "
              "(numeric, as \"10.0.0.1\" or \"2001:db8::1\")");
    expect_all_given_back(m);
}

TEST(Nic, AddressAndGidsTogetherThrow) {
    SimMachine m("sim0");
    Options o;
    o.address = "10.0.0.1";
    o.gids = {{ipv4_gid(10, 0, 0, 1), RoceVersion::V2}};
    EXPECT_THROW((void)m.open(o), std::invalid_argument);
}

// B19: a port whose only GIDs are link-local does not come up on index 0.
TEST(Nic, OnlyLinkLocalGidsIsAnErrorUnlessAllowed) {
    SimMachine m("sim0");
    Options o;
    o.gids = {{link_local_gid(Mac{2, 0, 0, 0, 0, 1}), RoceVersion::V1},
              {link_local_gid(Mac{2, 0, 0, 0, 0, 1}), RoceVersion::V2}};
    auto refused = m.open(o);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error(),
              "0000:04:00.0: no routable RoCEv2 GID among {fe80::ff:fe00:1 v1, fe80::ff:fe00:1 v2}; pass the port's "
              "address in Options::address (or allow link-local GIDs)");
    expect_all_given_back(m);
    o.link_local = LinkLocal::Allow;
    auto allowed = m.open(o);
    ASSERT_TRUE(allowed) << allowed.error();
    EXPECT_EQ(allowed->gid(), link_local_gid(Mac{2, 0, 0, 0, 0, 1}));
}

// A fault the model is told to make during bring-up, and the Error open gives for it.
struct BringUpFault {
    std::string name;
    std::function<void(sim::testing::Faults&)> plan;
    std::string error;  // the whole message, or its start where `prefix`
    bool prefix = false;
};

std::string words(ReqType t) { return std::string(hsi::name(t)); }
std::string words(Opcode o) { return std::string(hsi::name(o)); }

std::vector<BringUpFault> bring_up_faults() {
    const std::string bus = "0000:04:00.0: ";
    std::vector<BringUpFault> all;
    // Every HWRM and RCFW command of bring-up, refused.
    for (ReqType t :
         {ReqType::HWRM_VER_GET, ReqType::HWRM_FUNC_RESET, ReqType::HWRM_FUNC_QCAPS, ReqType::HWRM_FUNC_DRV_RGTR,
          ReqType::HWRM_FUNC_QCFG, ReqType::HWRM_FUNC_BACKING_STORE_QCAPS, ReqType::HWRM_QUEUE_QPORTCFG,
          ReqType::HWRM_FUNC_BACKING_STORE_CFG, ReqType::HWRM_RING_ALLOC, ReqType::HWRM_STAT_CTX_ALLOC})
        all.push_back({"Refused" + words(t), [t](auto& f) { f.refuse(t, HwrmError::RESOURCE_ALLOC_ERROR); },
                       bus + "the firmware refused " + words(t) + " (status 4: RESOURCE_ALLOC_ERROR)"});
    for (Opcode o : {Opcode::QUERY_FUNC, Opcode::QUERY_VERSION, Opcode::INITIALIZE_FW, Opcode::ADD_GID})
        all.push_back({"Refused" + words(o), [o](auto& f) { f.refuse(o, RcfwStatus::RESOURCES); },
                       bus + "the firmware refused " + words(o) + " (status 2: RESOURCES)"});
    // B25: never answered, a timeout instead of a hang.
    for (ReqType t : {ReqType::HWRM_FUNC_QCAPS, ReqType::HWRM_RING_ALLOC, ReqType::HWRM_STAT_CTX_ALLOC})
        all.push_back(
            {"Unanswered" + words(t), [t](auto& f) { f.drop(t); }, bus + words(t) + " timed out after 500 ms"});
    all.push_back({"UnansweredFuncResetWaitsFourTimesLonger", [](auto& f) { f.drop(ReqType::HWRM_FUNC_RESET); },
                   bus + "HWRM_FUNC_RESET timed out after 2 s"});
    all.push_back({"VerGetNeverAnswered", [](auto& f) { f.drop(ReqType::HWRM_VER_GET, sim::testing::Faults::always); },
                   bus + "HWRM_VER_GET timed out after 500 ms"});
    for (Opcode o : {Opcode::QUERY_FUNC, Opcode::INITIALIZE_FW, Opcode::ADD_GID})
        all.push_back(
            {"Unanswered" + words(o), [o](auto& f) { f.drop(o); }, bus + words(o) + " timed out after 500 ms"});
    // §3.1 step 5, §4.3 step 6: an answer of another sequence number or cookie is not the
    // command's: ignored (and said), so the command times out.
    all.push_back({"StaleHwrmResponse", [](auto& f) { f.stale(ReqType::HWRM_FUNC_QCFG); },
                   bus + "HWRM_FUNC_QCFG timed out after 500 ms (a response with sequence number ", true});
    all.push_back(
        {"StaleRcfwCompletion", [](auto& f) { f.stale(Opcode::ADD_GID); }, bus + "ADD_GID timed out after 500 ms"});
    // §0: a response shorter than the fields the driver reads is rejected, not read as zeros.
    all.push_back({"ShortFuncQcaps", [](auto& f) { f.truncate(ReqType::HWRM_FUNC_QCAPS); },
                   bus + "HWRM_FUNC_QCAPS was answered with 16 bytes; the driver reads its first 22"});
    all.push_back({"ShortVerGet", [](auto& f) { f.truncate(ReqType::HWRM_VER_GET, sim::testing::Faults::always); },
                   bus + "HWRM_VER_GET was answered with 16 bytes; the driver reads its first 114"});
    return all;
}

class BringUp : public ::testing::TestWithParam<BringUpFault> {};
INSTANTIATE_TEST_SUITE_P(Nic, BringUp, ::testing::ValuesIn(bring_up_faults()),
                         [](const auto& p) { return p.param.name; });

// Each fault: its Error, everything given back, and the next open (faults cleared) works.
TEST_P(BringUp, FaultIsAnErrorNamingTheCommandAndEverythingIsGivenBack) {
    Stepped s;
    GetParam().plan(s.m.faults);
    auto nic = s.m.open(s.options());
    ASSERT_FALSE(nic);
    if (GetParam().prefix) EXPECT_EQ(nic.error().rfind(GetParam().error, 0), 0u) << nic.error();
    else EXPECT_EQ(nic.error(), GetParam().error);
    expect_all_given_back(s.m);
    s.m.faults.clear();
    auto again = s.m.open(s.options());
    EXPECT_TRUE(again) << again.error();
}

// A firmware of other capabilities (sim::ModelOptions), and what open makes of it.
SimMachine with(sim::ModelOptions o) { return SimMachine("sim0", Iommu::Off, 1, Thread::Own, std::move(o)); }

// Linux's iboe_get_mtu: the port MTU less 96 bytes of RoCEv2 headers (GRH 40, UDP 8, BTH
// 12, XRC 4, AtomicETH 28, ICRC 4) is the largest path MTU: 1120 carries 1024, 1119 not.
TEST(Nic, PathMtuLeavesRoomForNinetySixBytesOfHeaders) {
    for (auto [port, path] :
         {std::pair{1120, Mtu::Mtu1024}, std::pair{1119, Mtu::Mtu512}, std::pair{1500, Mtu::Mtu1024},
          std::pair{4192, Mtu::Mtu4096}, std::pair{4191, Mtu::Mtu2048}}) {
        sim::ModelOptions o;
        o.port_mtu = static_cast<std::uint16_t>(port);
        SimMachine m = with(o);
        auto nic = m.open();
        ASSERT_TRUE(nic) << nic.error();
        EXPECT_EQ(nic->mtu(), path) << port;
    }
}

// A function whose QUERY_FUNC limits leave no room for one queue pair with one work
// request and its completion is refused at open, with the figures, not at each create.
TEST(Nic, QueryFuncLimitsOfZeroOrOneAreRefusedAtOpen) {
    sim::ModelOptions o;
    o.limits.max_qp_wr = 1;
    o.limits.max_cqe = 0;
    SimMachine m = with(o);
    auto nic = m.open();
    ASSERT_FALSE(nic);
    EXPECT_EQ(nic.error(),
              "0000:04:00.0: QUERY_FUNC reports max_qp_wr 1, max_cqe 0: the function cannot hold one "
              "queue pair with one work request and its completion (max_qp_wr and max_cqe count the "
              "ring's spare entry, so each must be at least 2)");
    expect_all_given_back(m);
    sim::ModelOptions two;
    two.limits.max_qp_wr = 2;
    two.limits.max_cqe = 2;
    SimMachine n = with(two);
    auto fits = n.open();
    ASSERT_TRUE(fits) << fits.error();
    EXPECT_EQ(fits->limits().max_qp_wr, 1u);
}

// bnxt_hwrm_func_backing_store_cfg: where max_ext_req_len is below the 336-byte request, the
// first 256 (BNXT_BACKING_STORE_CFG_LEGACY_LEN) go; the model refuses the longer one.
TEST(Nic, BackingStoreCfgIsSentAtTheLegacyLengthWhereTheFirmwareTakesNoMore) {
    sim::ModelOptions o;
    o.max_ext_req_len = 256;
    SimMachine m = with(o);
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_EQ(m.faults.counters().bad_descriptors, 0u);
}

// §3.1: short mode only where VER_GET's dev_caps_cfg offers it; a firmware without it
// cannot take the 256 bytes of BACKING_STORE_CFG, and open says so.
TEST(Nic, ARequestLongerThanTheWindowWithoutShortCommandsIsAnError) {
    sim::ModelOptions o;
    o.short_commands = false;
    SimMachine m = with(o);
    auto nic = m.open();
    ASSERT_FALSE(nic);
    EXPECT_EQ(nic.error(),
              "0000:04:00.0: HWRM_FUNC_BACKING_STORE_CFG takes 256 bytes, more than the 128-byte window, "
              "and the firmware offers no short commands (HWRM_VER_GET dev_caps_cfg)");
    expect_all_given_back(m);
}

// Linux's bnxt_alloc_ctx_mem: fast-path TQM rings as QCAPS counts them, or as many as
// QUEUE_QPORTCFG's queues where it gives 0; the model refuses rings beyond those.
TEST(Nic, TqmRingsAreAsManyAsTheFirmwareSays) {
    for (auto [qcaps, queues] : {std::pair{0, 4}, std::pair{0, 1}, std::pair{3, 8}}) {
        sim::ModelOptions o;
        o.backing_store.tqm_fp_rings_count = static_cast<std::uint8_t>(qcaps);
        o.cos_queues = static_cast<std::uint8_t>(queues);
        SimMachine m = with(o);
        auto nic = m.open();
        EXPECT_TRUE(nic) << qcaps << " " << queues << ": " << nic.error();
    }
}

// Linux's MRAV_RESERVATION_SPLIT (bnxt_hwrm_func_backing_store_cfg): with units, the MRs in
// units in the upper half; the model refuses either form where the other is due.
TEST(Nic, MravIsSplitWhereTheFirmwareGivesUnits) {
    for (std::uint16_t units : std::initializer_list<std::uint16_t>{0, 1, 4}) {
        sim::ModelOptions o;
        o.backing_store.mrav_num_entries_units = units;
        SimMachine m = with(o);
        auto nic = m.open();
        ASSERT_TRUE(nic) << units << ": " << nic.error();
        auto r = Region::host(*nic, 4096);
        EXPECT_TRUE(r) << units << ": " << r.error();
    }
}

// Linux's bnxt_alloc_ctx_mem gives QP, SRQ, CQ, MRAV and the slow-path TQM ring page
// tables of depth 2 even where one level would hold them, and the rest depth 1: the
// BACKING_STORE_CFG the firmware took carries those levels (pg_size_lvl, 4 KiB pages).
TEST(Nic, ContextMemoryPageTablesHaveTheLevelsLinuxForces) {
    SimMachine m = with(sim::ModelOptions{});
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    const auto cfg = m.faults.backing_store();
    ASSERT_TRUE(cfg);
    using K = hsi::BackingStoreKind;
    const auto level = [&](K k) { return hsi::backing_store::lvl.of(cfg->pg_size_lvl[static_cast<std::size_t>(k)]); };
    const auto enabled = [&](K k) { return (cfg->enables.get() >> static_cast<unsigned>(k) & 1u) != 0; };
    for (K k : {K::QPC, K::CQ, K::MRAV, K::TQM_SP}) {
        EXPECT_TRUE(enabled(k)) << static_cast<int>(k);
        EXPECT_EQ(level(k), 2u) << static_cast<int>(k);
    }
    for (K k : {K::STAT, K::TIM, K::TQM_RING0}) {
        EXPECT_TRUE(enabled(k)) << static_cast<int>(k);
        EXPECT_EQ(level(k), 1u) << static_cast<int>(k);
    }
    EXPECT_FALSE(enabled(K::SRQ));  // QCAPS gives SRQ and VNIC no entry size
    EXPECT_FALSE(enabled(K::VNIC));
    for (std::size_t k = 0; k < hsi::backing_store_kinds; ++k)
        if (cfg->enables.get() >> k & 1u) {
            EXPECT_EQ(hsi::backing_store::pg_size.of(cfg->pg_size_lvl[k]), 0u) << k;  // 4 KiB
        }
}

// A function without MSI-X (its configuration space has no MSI-X capability): the driver
// asks for poll-mode rings (RING_ALLOC int_mode POLL, which the model refuses to give an
// MSI-X vector the function lacks), Nic::interrupts() says so, and the NIC raises nothing.
TEST(Nic, FunctionWithoutMsixIsOpenedInPollMode) {
    sim::ModelOptions o;
    o.msix_vectors = 0;
    SimMachine m = with(o);
    auto nic = m.open();
    ASSERT_TRUE(nic) << nic.error();
    EXPECT_FALSE(nic->interrupts());
    auto cq = Cq::create(*nic, 16);
    ASSERT_TRUE(cq) << cq.error();
    std::array<Completion, 1> out;
    auto got = cq->wait(out, std::chrono::milliseconds(20));
    ASSERT_TRUE(got) << got.error();
    EXPECT_EQ(*got, 0u);
    EXPECT_EQ(m.faults.counters().interrupts, 0u);
    SimMachine with_msix = with(sim::ModelOptions{});
    auto other = with_msix.open();
    ASSERT_TRUE(other) << other.error();
    EXPECT_TRUE(other->interrupts());
}

// Linux's bnxt_qplib_init_rcfw: INITIALIZE_FW carries HW_REQUESTER_RETX_SUPPORTED where
// QUERY_FUNC reports the hardware's requester retransmission, and not elsewhere; the model
// refuses either mismatch (INVALID_PARAMETER).
TEST(Nic, InitializeFwSaysHardwareRetransmissionWhereQueryFuncReportsIt) {
    for (bool retx : {false, true}) {
        sim::ModelOptions o;
        o.hw_retransmission = retx;
        SimMachine m = with(o);
        auto nic = m.open();
        EXPECT_TRUE(nic) << retx << ": " << nic.error();
    }
}

// A firmware asking for more context memory than the driver gives is refused before any
// of it is allocated (262,144 TQM entries on 9 rings took 9.2 GiB and 13.9 s before): a
// table beyond a level-2 page list, or all of them beyond Options::max_context_bytes.
TEST(Nic, BackingStoreAskingForMoreThanTheDriverGivesIsRefusedWithTheFigures) {
    sim::ModelOptions o;
    o.backing_store.tqm_min_entries_per_ring = 262144;
    o.backing_store.tqm_max_entries_per_ring = 262144;
    o.backing_store.tqm_entry_size = 8192;
    SimMachine m = with(o);
    auto nic = m.open();
    ASSERT_FALSE(nic);
    EXPECT_EQ(nic.error().rfind("0000:04:00.0: HWRM_FUNC_BACKING_STORE_QCAPS asks for 262144 TQM slow-path entries of "
                                "8192 bytes (2 GiB), more than a level-2 page list of 4 KiB pages holds (1 GiB)",
                                0),
              0u)
        << nic.error();
    expect_all_given_back(m);
    o.backing_store.tqm_min_entries_per_ring = 65536;
    o.backing_store.tqm_max_entries_per_ring = 65536;
    o.backing_store.tqm_entry_size = 4096;
    SimMachine n = with(o);
    auto big = n.open();
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().rfind("0000:04:00.0: HWRM_FUNC_BACKING_STORE_QCAPS asks for ", 0), 0u) << big.error();
    EXPECT_NE(big.error().find("TQM fast-path 65536 x 4096 bytes"), std::string::npos) << big.error();
    EXPECT_NE(big.error().find("more than Options::max_context_bytes (256 MiB)"), std::string::npos) << big.error();
}

TEST(Nic, VerGetIsRetriedWhileItTimesOut) {
    Stepped s;
    s.m.faults.drop(ReqType::HWRM_VER_GET, 2);
    auto nic = s.m.open(s.options());
    EXPECT_TRUE(nic) << nic.error();
}

TEST(Nic, CommandTimeoutOptionBoundsEveryCommand) {
    Stepped s;
    s.m.faults.drop(ReqType::HWRM_FUNC_QCFG);
    Options o = s.options();
    o.command_timeout = std::chrono::milliseconds(20);
    auto nic = s.m.open(o);
    ASSERT_FALSE(nic);
    EXPECT_EQ(nic.error(), "0000:04:00.0: HWRM_FUNC_QCFG timed out after 20 ms");
}

// §7.4: every teardown step is attempted; the first failure is close's Error, and the
// release still gives everything back.
TEST(Nic, RefusedTeardownCommandIsCloseErrorAndEverythingIsGivenBack) {
    Stepped s;
    auto nic = s.m.open(s.options());
    ASSERT_TRUE(nic) << nic.error();
    s.m.faults.refuse(Opcode::DEINITIALIZE_FW, RcfwStatus::FAIL);
    s.m.faults.refuse(ReqType::HWRM_FUNC_DRV_UNRGTR, HwrmError::FAIL);
    auto closed = nic->close();
    ASSERT_FALSE(closed);
    EXPECT_EQ(closed.error(), "0000:04:00.0: the firmware refused DEINITIALIZE_FW (status 1: FAIL)");
    expect_all_given_back(s.m);
}

TEST(Nic, UnansweredTeardownCommandTimesOutAndEverythingIsGivenBack) {
    Stepped s;
    auto nic = s.m.open(s.options());
    ASSERT_TRUE(nic) << nic.error();
    s.m.faults.drop(ReqType::HWRM_RING_FREE);
    auto closed = nic->close();
    ASSERT_FALSE(closed);
    EXPECT_EQ(closed.error(), "0000:04:00.0: HWRM_RING_FREE timed out after 500 ms");
    expect_all_given_back(s.m);
}

}  // namespace
}  // namespace rig::bnxt::test

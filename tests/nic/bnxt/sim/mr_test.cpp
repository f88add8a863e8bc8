// The model's memory-region table (docs/hsi.md §4.6.12, §6): keys, REGISTER_MR's
// checks and statuses, and translation through page lists of levels 0, 1 and 2 checked
// against the memory the lists name.
#include <gtest/gtest.h>

#include "pair.hpp"

namespace rig::bnxt::sim::test {
namespace {

using MrTest = Pair;

constexpr std::uint8_t rw = spec::mr_local_write | spec::mr_remote_read;

// A region of `bytes` starting `offset` bytes into its first page, at virtual address va,
// over 4 KiB pages allocated one by one (not contiguous), described at `level`.
struct Region {
    Memory memory;
    std::uint64_t va = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    std::uint32_t key = 0;
    std::uint64_t bus(std::uint64_t at) const { return memory.at(offset + at); }
};

Region make_region(Node& n, std::uint64_t va, std::uint64_t bytes, unsigned level, std::uint8_t access = rw) {
    Region r;
    r.va = va;
    r.offset = va % 4096;
    r.bytes = bytes;
    r.memory = n.memory(r.offset + bytes, level, false);
    if (level == 0 && r.memory.pages.size() != 1) throw std::logic_error("level 0 is one page");
    r.key = n.register_mr(0, access, level, 12, r.memory.pbl, va, bytes);
    return r;
}

// The bytes a region holds at [at, at + n), read page by page from where its list points.
Bytes region_bytes(Node& n, const Region& r, std::uint64_t at, std::uint64_t count) {
    Bytes out;
    for (std::uint64_t i = 0; i < count;) {
        const std::uint64_t in_page = 4096 - (r.offset + at + i) % 4096;
        const std::uint64_t take = std::min(in_page, count - i);
        const Bytes piece = n.bus.peek(r.bus(at + i), take);
        out.insert(out.end(), piece.begin(), piece.end());
        i += take;
    }
    return out;
}

TEST_F(MrTest, KeysAreIndexShiftedByEightAndNeverTheReservedKey) {
    open();
    // §6.1: key = entry_index << 8 | variant; the two DMA MRs of open() took 0x100.
    const std::uint32_t k = a.dma_mr(spec::mr_local_write);
    EXPECT_EQ(k, 0x200u);
    EXPECT_EQ(a.dma_mr(spec::mr_local_write), 0x300u);
    EXPECT_NE(k, 0xFFFFFFFFu);
}

TEST_F(MrTest, LevelZeroRegionReceivesAtItsPageAndOffset) {
    open();
    const Region r = make_region(b, 0x7F00'0000'1234, 2000, 0);
    const Bytes data = pattern(2000, 11);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{r.va, r.key, 2000}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 2000}});
    settle(a, b);
    ASSERT_EQ(b.poll(bcq)->status(), 0);
    EXPECT_EQ(b.bus.peek(r.memory.pbl + 0x234, 2000), data);
}

TEST_F(MrTest, LevelOneRegionReceivesAcrossScatteredPagesAsItsPtesName) {
    open();
    // 7 pages of data starting 0x234 into the first: 8 pages, none adjacent to another.
    const std::uint64_t n = 7 * 4096;
    const Region r = make_region(b, 0x5000'0234, n, 1);
    ASSERT_EQ(r.memory.pages.size(), 8u);
    const Bytes data = pattern(n, 12);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{r.va, r.key, static_cast<std::uint32_t>(n)}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}});
    settle(a, b);
    ASSERT_EQ(b.poll(bcq)->status(), 0);
    EXPECT_EQ(region_bytes(b, r, 0, n), data);
    // §6.2 step 2: the first data page holds the bytes from va rounded down.
    EXPECT_EQ(b.bus.peek(r.memory.pages[0] + 0x234, 16), Bytes(data.begin(), data.begin() + 16));
    EXPECT_EQ(b.bus.peek(r.memory.pages[1], 16),
              Bytes(data.begin() + (4096 - 0x234), data.begin() + (4096 - 0x234) + 16));
}

TEST_F(MrTest, LevelTwoRegionIsReadAcrossTwoPteTables) {
    open({.buffer_bytes = 3 << 20});
    // 600 pages: PDE[0] names a full PTE page (512), PDE[1] the other 88.
    const std::uint64_t n = 600 * 4096 - 100;
    const Region r = make_region(b, 0x1'0000'0064, n, 2);
    ASSERT_EQ(r.memory.pages.size(), 600u);
    const Bytes data = pattern(n, 13);
    for (std::uint64_t i = 0; i < n;) {  // fill the region through its own pages
        const std::uint64_t take = std::min<std::uint64_t>(4096 - (r.offset + i) % 4096, n - i);
        b.bus.poke(r.bus(i), std::span(data).subspan(i, take));
        i += take;
    }
    a.post_send(aqp, spec::wqe_read, spec::signal_comp, {{abuf, akey, static_cast<std::uint32_t>(n)}}, 0, r.va, r.key);
    settle(a, b);
    ASSERT_EQ(a.poll(acq)->status(), 0);
    EXPECT_EQ(a.bus.peek(abuf, n), data);
}

TEST_F(MrTest, ZeroBasedRegionIsAddressedFromZero) {
    open();
    const Memory m = b.memory(8192, 1, false);
    const std::uint32_t key = b.register_mr(0, rw | 0x20, 1, 12, m.pbl, 0x7777'0000, 8192);  // ZERO_BASED
    const Bytes data = pattern(100, 14);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{5000, key, 100}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 100}});
    settle(a, b);
    ASSERT_EQ(b.poll(bcq)->status(), 0);
    EXPECT_EQ(b.bus.peek(m.pages[1] + 5000 - 4096, 100), data);
}

TEST_F(MrTest, LargePageRegionTranslatesWithItsPageSize) {
    open();
    // Level 1 with 64 KiB data pages (log2 16): two pages, the second not adjacent.
    const std::uint64_t p0 = b.bus.alloc(65536, 65536), p1 = b.bus.alloc(65536, 65536), pte = b.bus.alloc(4096);
    b.bus.put(pte, 8, p0 | 1);
    b.bus.put(pte + 8, 8, p1 | 1);
    const std::uint32_t key = b.register_mr(0, rw, 1, 16, pte, 0x40'0000 + 65536 - 50, 100);
    const Bytes data = pattern(100, 15);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{0x40'0000 + 65536 - 50, key, 100}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 100}});
    settle(a, b);
    ASSERT_EQ(b.poll(bcq)->status(), 0);
    EXPECT_EQ(b.bus.peek(p0 + 65536 - 50, 50), Bytes(data.begin(), data.begin() + 50));
    EXPECT_EQ(b.bus.peek(p1, 50), Bytes(data.begin() + 50, data.end()));
}

TEST_F(MrTest, PteWithoutValidIsCountedAndUsed) {
    open();
    const std::uint64_t page = b.bus.alloc(4096), pte = b.bus.alloc(4096);
    b.bus.put(pte, 8, page);  // VALID clear
    const std::uint32_t key = b.register_mr(0, rw, 1, 12, pte, 0x9000, 4096);
    b.post_recv(bqp, 1, {{0x9000, key, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    EXPECT_EQ(b.poll(bcq)->status(), 0);
    EXPECT_EQ(b.counters().pte_invalid, 1u);
}

// REGISTER_MR refusals (§4.6.12, §6.3): each with status 5.
class RegisterRefusalTest : public MrTest {
protected:
    std::uint8_t try_register(unsigned level, unsigned log2, std::uint64_t pbl, std::uint64_t va, std::uint64_t size,
                              std::uint8_t access = rw, std::uint16_t flags = 0) {
        std::uint8_t status = 0;
        a.register_mr(0, access, level, log2, pbl, va, size, 1, flags, &status);
        return status;
    }
};

TEST_F(RegisterRefusalTest, PageSizesOutsideTwelveToThirtyAreRefused) {
    open();
    const std::uint64_t page = a.bus.alloc(4096);
    EXPECT_EQ(try_register(0, 11, page, page, 2048), 5);
    EXPECT_EQ(try_register(0, 31, page, page, 2048), 5);
    EXPECT_EQ(try_register(0, 12, page, page, 2048), 0);
}

TEST_F(RegisterRefusalTest, LevelZeroSpanningTwoPagesIsRefused) {
    open();
    const std::uint64_t buffer = a.bus.alloc(16384, 8192);
    EXPECT_EQ(try_register(0, 12, buffer, buffer + 100, 4096), 5);
    EXPECT_EQ(try_register(0, 13, buffer + 4096, buffer, 8192), 5);  // the 8 KiB page is not 8 KiB-aligned
    EXPECT_EQ(try_register(0, 13, buffer, buffer, 8192), 0);         // one 8 KiB page
}

TEST_F(RegisterRefusalTest, LevelOneNamingMoreThan512PagesIsRefused) {
    open();
    const std::uint64_t pte = a.bus.alloc(4096);
    EXPECT_EQ(try_register(1, 12, pte, 0, 513 * 4096), 5);
    EXPECT_EQ(try_register(3, 12, pte, 0, 4096), 5);  // no level 3
}

TEST_F(RegisterRefusalTest, RemoteWriteWithoutLocalWriteIsRefused) {
    open();
    const std::uint64_t page = a.bus.alloc(4096);
    EXPECT_EQ(try_register(0, 12, page, page, 4096, spec::mr_remote_write), 5);
}

TEST_F(RegisterRefusalTest, ZeroSizeAndUnifiedAllocationAreRefused) {
    open();
    const std::uint64_t page = a.bus.alloc(4096);
    EXPECT_EQ(try_register(0, 12, page, page, 0), 5);
    EXPECT_EQ(try_register(0, 12, page, page, 4096, rw, 0x1), 5);  // ALLOC_MR: not reported by QUERY_FUNC
}

TEST_F(MrTest, RegisteringAnUnallocatedOrBoundKeyIsRefused) {
    open();
    const std::uint64_t page = a.bus.alloc(4096);
    Msg m(56);
    m.put(0, 1, spec::op_register_mr).put(16, 1, 12 << 2).put(17, 1, rw).put(18, 2, 12).put(20, 4, 0x7700);
    m.put(24, 8, page).put(32, 8, page).put(40, 8, 4096);
    EXPECT_EQ(a.rcfw(m)->status, 5);
    m.put(20, 4, akey);  // bound already
    EXPECT_EQ(a.rcfw(m)->status, 5);
}

TEST_F(MrTest, PtePageSizeOtherThanFourKibIsRefused) {
    open();
    const std::uint64_t pte = a.bus.alloc(4096);
    const auto k = a.rcfw(Msg(32).put(0, 1, spec::op_allocate_mrw).put(28, 4, 1));
    Msg m(56);
    m.put(0, 1, spec::op_register_mr).put(16, 1, 1 | (12 << 2)).put(17, 1, rw).put(18, 2, 13).put(20, 4, k->xid);
    m.put(24, 8, pte).put(32, 8, 0).put(40, 8, 8192);
    EXPECT_EQ(a.rcfw(m)->status, 5);
}

TEST_F(MrTest, DeregisteredKeyMovesNoMoreBytes) {
    open();
    const Region r = make_region(b, 0x3000, 4096, 0);
    ASSERT_EQ(b.rcfw(Msg(24).put(0, 1, spec::op_deregister_mr).put(16, 4, r.key))->status, 0);
    b.post_recv(bqp, 1, {{r.va, r.key, 64}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 64}});
    settle(a, b);
    EXPECT_EQ(b.poll(bcq)->status(), 0x3);
    EXPECT_EQ(b.bus.get(r.memory.pbl, 8), 0u);
    // §4.6.12: still allocated; deregistering again is refused, deallocating frees it.
    EXPECT_EQ(b.rcfw(Msg(24).put(0, 1, spec::op_deregister_mr).put(16, 4, r.key))->status, 5);
    EXPECT_EQ(b.rcfw(Msg(24).put(0, 1, spec::op_deallocate_key).put(16, 1, 0).put(20, 4, r.key))->status, 0);
    EXPECT_EQ(b.rcfw(Msg(24).put(0, 1, spec::op_deallocate_key).put(16, 1, 0).put(20, 4, r.key))->status, 5);
}

TEST_F(MrTest, DeallocatingARegisteredKeyIsRefused) {
    open();
    EXPECT_EQ(a.rcfw(Msg(24).put(0, 1, spec::op_deallocate_key).put(16, 1, 1).put(20, 4, akey))->status, 5);
}

TEST_F(MrTest, MemoryWindowsAreNotImplemented) {
    open();
    EXPECT_EQ(a.rcfw(Msg(32).put(0, 1, spec::op_allocate_mrw).put(24, 1, 2).put(28, 4, 1))->status, 4);
}

TEST_F(MrTest, RelaxedOrderingRegionGetsAPacketsBytesLastPieceFirst) {
    open({.mtu_code = 4});
    // B27: with ENABLE_RO the NIC's writes of one packet may land out of order.
    const std::uint64_t buffer = b.bus.alloc(4096);
    const std::uint32_t ro = b.register_mr(0, rw, 0, 12, buffer, buffer, 4096, 1, 0x4);
    const Bytes data = pattern(4096, 16);
    a.bus.poke(abuf, data);
    b.post_recv(bqp, 1, {{buffer, ro, 4096}});
    b.post_recv(bqp, 2, {{bbuf, bkey, 4096}});
    b.settle();
    b.bus.log_writes(true);
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4096}});
    a.post_send(aqp, spec::wqe_send, spec::signal_comp, {{abuf, akey, 4096}});
    settle(a, b);
    const auto writes = b.bus.writes();
    std::vector<std::uint64_t> ro_writes, strict_writes;
    for (const auto& w : writes) {
        if (w.address >= buffer && w.address < buffer + 4096) ro_writes.push_back(w.address);
        if (w.address >= bbuf && w.address < bbuf + 4096) strict_writes.push_back(w.address);
    }
    ASSERT_EQ(ro_writes.size(), 64u);
    EXPECT_EQ(ro_writes.front(), buffer + 4096 - 64);
    EXPECT_EQ(ro_writes.back(), buffer);
    EXPECT_EQ(strict_writes.size(), 1u);        // one write in address order
    EXPECT_EQ(b.bus.peek(buffer, 4096), data);  // and the CQE still comes after all of them
    EXPECT_EQ(b.drain(bcq).size(), 2u);
}

}  // namespace
}  // namespace rig::bnxt::sim::test

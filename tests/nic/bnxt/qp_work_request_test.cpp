// The WQEs and PSN entries a post writes (rig/bnxt/detail/work_request.hpp; docs/hsi.md
// §5.2-§5.4), compared with bytes placed by hand at the offsets of the spec's tables.
#include "rig/bnxt/detail/work_request.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "hsi/bytes.hpp"

namespace rig::bnxt::detail {
namespace {

using hsi::test::Bytes;

struct Wqe {
    std::array<std::byte, 128> bytes;
    Wqe() { bytes.fill(std::byte{0xCC}); }  // what a used slot does not overwrite shows
    WqeBytes span() { return WqeBytes(bytes); }
    std::vector<std::uint8_t> first(std::size_t n) const {
        std::vector<std::uint8_t> out(n);
        for (std::size_t i = 0; i < n; ++i) out[i] = std::to_integer<std::uint8_t>(bytes[i]);
        return out;
    }
};

constexpr SgeRef sge{0x0000'7f12'3456'8000, 0x0000'0a00, 4096};

TEST(QpWorkRequest, SignalledSendIsThreeSlots) {
    Wqe w;
    EXPECT_EQ(encode_send(w.span(), true, std::nullopt, sge), 48u);
    Bytes b(48);
    b.put(0, 1, 0x00).put(1, 1, 0x01).put(2, 1, 3).put(8, 4, 4096);  // SEND, SIGNAL_COMP, 2 + 1 slots
    b.put(32, 8, 0x0000'7f12'3456'8000).put(40, 4, 0xa00).put(44, 4, 4096);
    EXPECT_EQ(w.first(48), b.b);
}

TEST(QpWorkRequest, SendWithImmediateCarriesItLittleEndian) {
    Wqe w;
    encode_send(w.span(), false, 0xDEADBEEF, sge);
    Bytes b(48);
    b.put(0, 1, 0x01).put(1, 1, 0x00).put(2, 1, 3).put(4, 4, 0xDEADBEEF).put(8, 4, 4096);
    b.put(32, 8, 0x0000'7f12'3456'8000).put(40, 4, 0xa00).put(44, 4, 4096);
    EXPECT_EQ(w.first(48), b.b);
}

// §5.2 flags: SE is bit 3, beside SIGNAL_COMP (bit 0) and INLINE (bit 4).
TEST(QpWorkRequest, SolicitedSendsSetTheSeFlag) {
    Wqe w;
    encode_send(w.span(), true, std::nullopt, sge, true);
    EXPECT_EQ(w.first(2), (std::vector<std::uint8_t>{0x00, 0x09}));
    encode_send(w.span(), false, std::nullopt, sge, true);
    EXPECT_EQ(w.first(2), (std::vector<std::uint8_t>{0x00, 0x08}));
    const std::array<std::byte, 4> data{};
    encode_send_inline(w.span(), true, std::nullopt, data, true);
    EXPECT_EQ(w.first(2), (std::vector<std::uint8_t>{0x00, 0x19}));
}

TEST(QpWorkRequest, EmptySendHasNoSge) {
    Wqe w;
    EXPECT_EQ(encode_send(w.span(), true, std::nullopt, SgeRef{0x1000, 5, 0}), 32u);
    EXPECT_EQ(w.first(32), Bytes(32).put(1, 1, 0x01).put(2, 1, 2).b);
}

TEST(QpWorkRequest, InlineSendCopiesTheBytesAndZeroesTheSlotTail) {
    Wqe w;
    std::array<std::byte, 20> data;
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(0x40 + i);
    // §5.2.4: wqe_size = 2 + ceil(20 / 16) = 4, flags SIGNAL_COMP | INLINE = 0x11.
    EXPECT_EQ(encode_send_inline(w.span(), true, std::nullopt, data), 64u);
    Bytes b(64);
    b.put(0, 1, 0x00).put(1, 1, 0x11).put(2, 1, 4).put(8, 4, 20);
    for (std::size_t i = 0; i < 20; ++i) b.put(32 + i, 1, 0x40 + i);
    EXPECT_EQ(w.first(64), b.b);
}

TEST(QpWorkRequest, InlineSendOf96BytesFillsTheWqe) {
    Wqe w;
    std::array<std::byte, 96> data;
    data.fill(std::byte{0x5A});
    EXPECT_EQ(encode_send_inline(w.span(), false, 7u, data), 128u);
    EXPECT_EQ(w.first(4), (std::vector<std::uint8_t>{0x01, 0x10, 8, 0}));
    EXPECT_EQ(std::to_integer<int>(w.bytes[127]), 0x5A);
}

TEST(QpWorkRequest, ReadCarriesRemoteAddressAndKey) {
    Wqe w;
    EXPECT_EQ(encode_read(w.span(), true, 0x0000'0001'2345'6000, 0x0000'0b00, sge), 48u);
    Bytes b(48);
    b.put(0, 1, 0x06).put(1, 1, 0x01).put(2, 1, 3).put(8, 4, 4096);  // RDMA_READ
    b.put(16, 8, 0x0000'0001'2345'6000).put(24, 4, 0xb00);
    b.put(32, 8, 0x0000'7f12'3456'8000).put(40, 4, 0xa00).put(44, 4, 4096);
    EXPECT_EQ(w.first(48), b.b);
}

TEST(QpWorkRequest, RecvCarriesTheTagInWrId) {
    Wqe w;
    EXPECT_EQ(encode_recv(w.span(), 0x12345, sge), 48u);
    Bytes b(48);
    b.put(0, 1, 0x80).put(2, 1, 3).put(8, 4, 0x12345);  // RECV, 2 + 1 slots, wr_id[0]
    b.put(32, 8, 0x0000'7f12'3456'8000).put(40, 4, 0xa00).put(44, 4, 4096);
    EXPECT_EQ(w.first(48), b.b);
}

TEST(QpWorkRequest, EmptyRecvCountsOneZeroLengthSge) {
    Wqe w;
    EXPECT_EQ(encode_recv(w.span(), 3, SgeRef{0x2000, 9, 0}), 48u);
    Bytes b(48);
    b.put(0, 1, 0x80).put(2, 1, 3).put(8, 4, 3).put(32, 8, 0x2000).put(40, 4, 9).put(44, 4, 0);
    EXPECT_EQ(w.first(48), b.b);
}

TEST(QpWorkRequest, PsnEntryOfTheWriteExample) {
    // §7.3 step 2 for WQE 5: start PSN | type << 24, next PSN, start slot 8 x 5.
    std::array<std::byte, 16> e;
    e.fill(std::byte{0xCC});
    encode_psn(e, hsi::WqeType::SEND, 0x00ABCDEF, 0x00ABCDF0, 5);
    Bytes b(16);
    b.put(0, 4, 0x00ABCDEF).put(4, 4, 0x00ABCDF0).put(8, 2, 40);
    std::vector<std::uint8_t> got(16);
    for (std::size_t i = 0; i < 16; ++i) got[i] = std::to_integer<std::uint8_t>(e[i]);
    EXPECT_EQ(got, b.b);
}

TEST(QpWorkRequest, PsnEntryOfAReadWrapsThePsnAndTheSlot) {
    std::array<std::byte, 16> e;
    encode_psn(e, hsi::WqeType::RDMA_READ, 0xFFFFFF, 0x000002, 8200);  // 8 x 8200 = 65600 → 64
    Bytes b(16);
    b.put(0, 4, 0x06FFFFFF).put(4, 4, 0x000002).put(8, 2, 64);
    std::vector<std::uint8_t> got(16);
    for (std::size_t i = 0; i < 16; ++i) got[i] = std::to_integer<std::uint8_t>(e[i]);
    EXPECT_EQ(got, b.b);
}

TEST(QpWorkRequest, PacketsPerMessageFollowThePathMtu) {
    EXPECT_EQ(hsi::npkts(0, 1024), 1u);
    EXPECT_EQ(hsi::npkts(1, 1024), 1u);
    EXPECT_EQ(hsi::npkts(4096, 1024), 4u);
    EXPECT_EQ(hsi::npkts(64ull << 20, 4096), 16384u);
}

}  // namespace
}  // namespace rig::bnxt::detail

// Fuzzes the store protocol as a server and a client meet it: bytes arrive in pieces of
// sizes the input picks, frames are reassembled and decoded as requests and replies. Bad
// bytes must be a ProtocolError; a frame that decodes must encode back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "comm/store/store_protocol.h"
#include "fuzz_check.h"

namespace {

using namespace zt::comm::protocol;

std::string whole_frame(const Frame& frame) {
  std::string bytes(kHeaderBytes, '\0');
  auto length = static_cast<std::uint32_t>(frame.payload.size());
  for (std::size_t i = 0; i < 4; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xFFu);
  bytes[4] = static_cast<char>(frame.op);
  return bytes + frame.payload;
}

void check_frame(const Frame& frame) {
  Request request;
  if (zt::fuzz::accepts<ProtocolError>([&] { request = decode_request(frame); })) {
    std::string encoded;
    if (!zt::fuzz::accepts<zt::CommError>([&] { encoded = encode_request(request); })) {
      zt::fuzz::fail("a decoded request does not encode");
    }
    if (encoded != whole_frame(frame)) zt::fuzz::fail("a request does not round-trip");
  }
  Response response;
  if (zt::fuzz::accepts<ProtocolError>([&] { response = decode_response(frame); })) {
    std::string encoded;
    if (!zt::fuzz::accepts<zt::CommError>([&] { encoded = encode_response(response); })) {
      zt::fuzz::fail("a decoded reply does not encode");
    }
    if (encoded != whole_frame(frame)) zt::fuzz::fail("a reply does not round-trip");
  }
  static_cast<void>(op_name(frame.op));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the piece size (1..256) and whether the handshake bound applies.
  const std::size_t piece = (data[0] & 0x7Fu) * 2u + 1u;
  FrameParser parser(data[0] & 0x80u ? kMaxHandshakePayloadBytes : kMaxPayloadBytes);
  const auto* bytes = reinterpret_cast<const char*>(data + 1);
  std::size_t left = size - 1;
  std::size_t fed = 0;
  std::size_t returned = 0;
  try {
    while (left > 0) {
      const std::size_t n = left < piece ? left : piece;
      parser.feed(bytes, n);
      bytes += n;
      left -= n;
      fed += n;
      while (std::optional<Frame> frame = parser.next()) {
        returned += kHeaderBytes + frame->payload.size();
        check_frame(*frame);
      }
      if (parser.buffered_bytes() != fed - returned) zt::fuzz::fail("the parser lost bytes");
    }
  } catch (const ProtocolError&) {
    // An oversized length prefix: the server drops the connection.
  }
  return 0;
}

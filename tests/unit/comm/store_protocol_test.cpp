// The store protocol without a network: exact little-endian bytes, round trips of every
// request and reply, bounds at and past their limits, malformed payloads, the frame parser
// fed in arbitrary pieces, and tokens.
#include "comm/store/store_protocol.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "comm/store/store_token.h"

namespace zt::comm::protocol {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s.push_back(static_cast<char>(v));
  return s;
}

// Splits an encoded frame into the parser's view of it.
Frame parse_one(const std::string& encoded) {
  FrameParser parser;
  parser.feed(encoded.data(), encoded.size());
  auto frame = parser.next();
  EXPECT_TRUE(frame.has_value());
  EXPECT_EQ(parser.buffered_bytes(), 0u);
  return frame.value_or(Frame{});
}

Frame frame_of(Op op, std::string payload) {
  return Frame{static_cast<std::uint8_t>(op), std::move(payload)};
}

std::vector<Request> sample_requests() {
  return {HandshakeRequest{kMagic, kVersion, "token"},
          SetRequest{"key", std::string("v\0al", 4)},
          TryGetRequest{"k"},
          GetRequest{"k", 1234567890123ull},
          AddRequest{"counter", -9'000'000'000'000'000'000},
          CompareSetRequest{"k", "", "desired"},
          DeleteRequest{""},
          WaitRequest{{"a", "bb", "ccc"}, 30000}};
}

TEST(StoreProtocol, EncodesLittleEndianByteByByte) {
  EXPECT_EQ(encode_request(AddRequest{"k", -2}), bytes({13, 0, 0, 0, 0x13, 1, 0, 0, 0, 'k', 0xFE,
                                                        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
  EXPECT_EQ(encode_request(HandshakeRequest{kMagic, kVersion, "t"}),
            bytes({11, 0, 0, 0, 0x01, 'Z', 'T', 'S', 'T', 1, 0, 1, 0, 0, 0, 't'}));
  EXPECT_EQ(encode_request(GetRequest{"", 0x0102030405060708ull}),
            bytes({12, 0, 0, 0, 0x12, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1}));
}

TEST(StoreProtocol, EveryRequestRoundTrips) {
  for (const Request& request : sample_requests()) {
    EXPECT_EQ(decode_request(parse_one(encode_request(request))), request)
        << "request #" << request.index();
  }
}

TEST(StoreProtocol, EveryReplyRoundTrips) {
  std::vector<Response> replies(7);
  replies[0].kind = Reply::kOk;
  replies[1].kind = Reply::kValue;
  replies[1].text = std::string("\0\xff", 2);
  replies[2].kind = Reply::kNotFound;
  replies[3].kind = Reply::kCounter;
  replies[3].number = -1;
  replies[4].kind = Reply::kDeleted;
  replies[4].number = 1;
  replies[5].kind = Reply::kTimedOut;
  replies[5].keys = {"rank/1", "rank/2"};
  replies[6].kind = Reply::kError;
  replies[6].text = "refused";
  for (const Response& reply : replies) {
    const Response decoded = decode_response(parse_one(encode_response(reply)));
    EXPECT_EQ(decoded.kind, reply.kind);
    EXPECT_EQ(decoded.text, reply.text);
    EXPECT_EQ(decoded.number, reply.number);
    EXPECT_EQ(decoded.keys, reply.keys);
  }
}

TEST(StoreProtocol, KeyAtTheLimitRoundTripsAndOneMoreIsRejected) {
  const std::string at_limit(kMaxKeyBytes, 'k');
  EXPECT_EQ(decode_request(parse_one(encode_request(TryGetRequest{at_limit}))),
            Request(TryGetRequest{at_limit}));
  EXPECT_THROW(encode_request(TryGetRequest{at_limit + "k"}), CommError);
  // A peer that ignores the limit is a protocol violation on the receiving side.
  std::string payload = bytes({0x01, 0x10, 0, 0}) + at_limit + "k";  // size 4097
  EXPECT_THROW(decode_request(frame_of(Op::kTryGet, payload)), ProtocolError);
}

TEST(StoreProtocol, ValueAtTheLimitRoundTripsAndOneMoreIsRejected) {
  const std::string value(kMaxValueBytes, 'v');
  const Request decoded = decode_request(parse_one(encode_request(SetRequest{"k", value})));
  EXPECT_TRUE(std::get<SetRequest>(decoded).value == value);
  EXPECT_THROW(encode_request(SetRequest{"k", value + "v"}), CommError);
  Response reply;
  reply.kind = Reply::kValue;
  reply.text = value + "v";
  EXPECT_THROW(encode_response(reply), CommError);
}

TEST(StoreProtocol, EveryTruncationOfEveryRequestIsAProtocolError) {
  for (const Request& request : sample_requests()) {
    const Frame whole = parse_one(encode_request(request));
    for (std::size_t size = 0; size < whole.payload.size(); ++size) {
      EXPECT_THROW(decode_request(Frame{whole.op, whole.payload.substr(0, size)}), ProtocolError)
          << "request #" << request.index() << " cut to " << size << " bytes";
    }
  }
}

TEST(StoreProtocol, TrailingBytesAreAProtocolError) {
  const Frame whole = parse_one(encode_request(DeleteRequest{"k"}));
  EXPECT_THROW(decode_request(Frame{whole.op, whole.payload + "x"}), ProtocolError);
}

TEST(StoreProtocol, UnknownOpsAreProtocolErrors) {
  EXPECT_THROW(decode_request(Frame{0x42, ""}), ProtocolError);
  EXPECT_THROW(decode_request(Frame{0x80, ""}), ProtocolError);  // a reply is not a request
  EXPECT_THROW(decode_response(Frame{0x10, ""}), ProtocolError);
}

TEST(StoreProtocol, HugeKeyCountIsRejectedBeforeAllocating) {
  // Claims 2^32 - 1 keys in a 12-byte payload.
  EXPECT_THROW(
      decode_request(frame_of(Op::kWait, bytes({0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0}))),
      ProtocolError);
}

TEST(StoreProtocol, DeletedFlagOtherThanZeroOrOneIsAProtocolError) {
  EXPECT_THROW(decode_response(Frame{static_cast<std::uint8_t>(Reply::kDeleted), bytes({2})}),
               ProtocolError);
}

TEST(StoreFrameParser, OneBytePiecesYieldTheSameFrames) {
  std::string stream;
  for (const Request& request : sample_requests()) stream += encode_request(request);
  FrameParser parser;
  std::vector<Request> decoded;
  for (char byte : stream) {
    parser.feed(&byte, 1);
    while (auto frame = parser.next()) decoded.push_back(decode_request(*frame));
  }
  EXPECT_EQ(decoded, sample_requests());
  EXPECT_EQ(parser.buffered_bytes(), 0u);
}

TEST(StoreFrameParser, PiecesOfEverySizeYieldTheSameFrames) {
  std::string stream;
  for (const Request& request : sample_requests()) stream += encode_request(request);
  for (std::size_t piece = 1; piece <= stream.size(); ++piece) {
    FrameParser parser;
    std::vector<Request> decoded;
    for (std::size_t at = 0; at < stream.size(); at += piece) {
      parser.feed(stream.data() + at, std::min(piece, stream.size() - at));
      while (auto frame = parser.next()) decoded.push_back(decode_request(*frame));
    }
    EXPECT_EQ(decoded, sample_requests()) << "pieces of " << piece << " bytes";
  }
}

TEST(StoreFrameParser, HeaderAloneIsNotAFrame) {
  FrameParser parser;
  const std::string header = bytes({3, 0, 0, 0, 0x10});
  parser.feed(header.data(), 3);
  EXPECT_FALSE(parser.next().has_value());
  parser.feed(header.data() + 3, 2);
  EXPECT_FALSE(parser.next().has_value());
  EXPECT_EQ(parser.buffered_bytes(), 5u);
  parser.feed("abc", 3);
  const auto frame = parser.next();
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->op, 0x10);
  EXPECT_EQ(frame->payload, "abc");
}

TEST(StoreFrameParser, EmptyPayloadIsAFrame) {
  FrameParser parser;
  const std::string frame = bytes({0, 0, 0, 0, 0x80});
  parser.feed(frame.data(), frame.size());
  const auto parsed = parser.next();
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->op, 0x80);
  EXPECT_TRUE(parsed->payload.empty());
}

TEST(StoreFrameParser, PayloadAtTheLimitIsAcceptedAndOneMoreIsRejected) {
  FrameParser parser(16);
  const std::string at_limit = bytes({16, 0, 0, 0, 0x10}) + std::string(16, 'x');
  parser.feed(at_limit.data(), at_limit.size());
  EXPECT_TRUE(parser.next().has_value());
  const std::string past_limit = bytes({17, 0, 0, 0});
  parser.feed(past_limit.data(), past_limit.size());
  EXPECT_THROW(parser.next(), ProtocolError);
}

TEST(StoreFrameParser, HugeLengthPrefixIsRejectedFromItsFourBytes) {
  FrameParser parser;
  const std::string prefix = bytes({0xFF, 0xFF, 0xFF, 0xFF});
  parser.feed(prefix.data(), 3);
  EXPECT_FALSE(parser.next().has_value());
  parser.feed(prefix.data() + 3, 1);
  EXPECT_THROW(parser.next(), ProtocolError);
  const std::string largest_legal = [] {
    std::string s;
    for (int i = 0; i < 4; ++i)
      s.push_back(static_cast<char>((kMaxPayloadBytes >> (8 * i)) & 0xFF));
    return s;
  }();
  FrameParser fresh;
  fresh.feed(largest_legal.data(), largest_legal.size());
  EXPECT_FALSE(fresh.next().has_value());  // waits for the payload instead of throwing
}

TEST(StoreToken, GeneratedTokensAre32HexDigitsAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 8; ++i) {
    const std::string token = generate_store_token();
    EXPECT_EQ(token.size(), 32u);
    EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
    seen.insert(token);
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(StoreToken, TokensEqualComparesWholeStrings) {
  EXPECT_TRUE(tokens_equal("", ""));
  EXPECT_TRUE(tokens_equal("abc", "abc"));
  EXPECT_FALSE(tokens_equal("abc", "abd"));
  EXPECT_FALSE(tokens_equal("abc", "ab"));
  EXPECT_FALSE(tokens_equal("ab", "abc"));
  EXPECT_FALSE(tokens_equal("", "a"));
  EXPECT_FALSE(tokens_equal(std::string("a\0", 2), "a"));
}

}  // namespace
}  // namespace zt::comm::protocol

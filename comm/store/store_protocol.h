// The TCP store's wire protocol: frame layout, requests and replies, their encoder and
// decoder, and the incremental frame parser. Independent of Asio so it can be unit tested.
#pragma once

// Note [Store protocol, version 1]
//
// Every integer is little-endian by specification and is encoded byte by byte, so the
// protocol does not depend on the host. A connection carries frames in both directions:
//
//   frame   := length:u32  op:u8  payload[length]     (length excludes the 5 header bytes)
//   string  := size:u32  bytes[size]                  (bytes, not necessarily text)
//   keys    := count:u32  string[count]
//
// A client's first frame is the handshake; the server replies kOk or kError and, after
// kError, closes the connection. The server drops a connection that has not completed its
// handshake within a few seconds (TcpStoreServerOptions::handshake_timeout).
//
//   0x01 handshake    magic:u32 = kMagic ("ZTST")  version:u16 = kVersion  token:string
//
// Then requests, strictly one at a time: a client sends the next request only after it
// has read the reply to the previous one (a request that arrives while the previous one is
// pending is a protocol violation).
//
//   op   request                                        reply
//   0x10 set          key value                         kOk
//   0x11 try_get      key                               kValue | kNotFound
//   0x12 get          key timeout_ms:u64                kValue | kTimedOut (waits for key)
//   0x13 add          key delta:i64                     kCounter | kError (not a counter)
//   0x14 compare_set  key expected desired              kValue (the value afterwards)
//   0x15 delete       key                               kDeleted
//   0x16 wait         keys timeout_ms:u64               kOk | kTimedOut
//
//   0x80 kOk          (empty)
//   0x81 kValue       value:string
//   0x82 kNotFound    (empty)
//   0x83 kCounter     value:i64 (two's complement)
//   0x84 kDeleted     existed:u8 (0 or 1)
//   0x85 kTimedOut    keys (those still missing when the timeout fired)
//   0x86 kError       message:string
//
// Bounds: a key is at most kMaxKeyBytes, a value kMaxValueBytes, a token kMaxTokenBytes, a
// wait at most kMaxWaitKeys keys; a length prefix above kMaxPayloadBytes (above
// kMaxHandshakePayloadBytes before the handshake) is rejected as soon as its 4 bytes arrive. A
// frame that is oversized, truncated, carries trailing bytes, breaks a bound or names an unknown op
// is a ProtocolError: the server logs it once and closes that connection only.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error.h"

namespace zt::comm::protocol {

inline constexpr std::uint32_t kMagic = 0x5453545A;  // bytes 'Z' 'T' 'S' 'T' on the wire
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 5;
inline constexpr std::size_t kMaxKeyBytes = std::size_t{4} * 1024;
inline constexpr std::size_t kMaxValueBytes = std::size_t{64} * 1024 * 1024;
inline constexpr std::size_t kMaxTokenBytes = 1024;
inline constexpr std::size_t kMaxWaitKeys = std::size_t{64} * 1024;
// Until the handshake succeeds only a handshake fits, so a stranger cannot make the server
// buffer a large frame.
inline constexpr std::size_t kMaxHandshakePayloadBytes = 4 + 2 + 4 + kMaxTokenBytes;
// The largest legal payload is a compare_set with a maximal key and two maximal values.
inline constexpr std::size_t kMaxPayloadBytes = kMaxKeyBytes + 2 * kMaxValueBytes + 64;

// A frame that breaks the protocol; the server closes the connection that sent it.
class ProtocolError : public CommError {
 public:
  using CommError::CommError;
};

enum class Op : std::uint8_t {
  kHandshake = 0x01,
  kSet = 0x10,
  kTryGet = 0x11,
  kGet = 0x12,
  kAdd = 0x13,
  kCompareSet = 0x14,
  kDelete = 0x15,
  kWait = 0x16,
};

enum class Reply : std::uint8_t {
  kOk = 0x80,
  kValue = 0x81,
  kNotFound = 0x82,
  kCounter = 0x83,
  kDeleted = 0x84,
  kTimedOut = 0x85,
  kError = 0x86,
};

struct HandshakeRequest {
  std::uint32_t magic = kMagic;
  std::uint16_t version = kVersion;
  std::string token;
  bool operator==(const HandshakeRequest&) const = default;
};
struct SetRequest {
  std::string key;
  std::string value;
  bool operator==(const SetRequest&) const = default;
};
struct TryGetRequest {
  std::string key;
  bool operator==(const TryGetRequest&) const = default;
};
struct GetRequest {
  std::string key;
  std::uint64_t timeout_ms = 0;
  bool operator==(const GetRequest&) const = default;
};
struct AddRequest {
  std::string key;
  std::int64_t delta = 0;
  bool operator==(const AddRequest&) const = default;
};
struct CompareSetRequest {
  std::string key;
  std::string expected;
  std::string desired;
  bool operator==(const CompareSetRequest&) const = default;
};
struct DeleteRequest {
  std::string key;
  bool operator==(const DeleteRequest&) const = default;
};
struct WaitRequest {
  std::vector<std::string> keys;
  std::uint64_t timeout_ms = 0;
  bool operator==(const WaitRequest&) const = default;
};

using Request = std::variant<HandshakeRequest, SetRequest, TryGetRequest, GetRequest, AddRequest,
                             CompareSetRequest, DeleteRequest, WaitRequest>;

// A reply; which fields are meaningful depends on `kind` (see the table above).
struct Response {
  Reply kind = Reply::kOk;
  std::string text;               // kValue: the value; kError: the message
  std::int64_t number = 0;        // kCounter: the counter; kDeleted: 1 if the key existed
  std::vector<std::string> keys;  // kTimedOut: the keys still missing
};

// One complete frame as the parser yields it: the op byte and the undecoded payload.
struct Frame {
  std::uint8_t op = 0;
  std::string payload;
};

// Whole frames, header included. Throw CommError when a field breaks a bound, so an
// oversized key or value is reported to the caller before anything is sent.
std::string encode_request(const Request& request);
std::string encode_response(const Response& response);

// Throw ProtocolError when the frame is not a well-formed request (or reply).
Request decode_request(const Frame& frame);
Response decode_response(const Frame& frame);

// "set", "get", ...: the op's name for messages.
std::string_view op_name(std::uint8_t op);

// Reassembles frames from bytes that arrive in arbitrary pieces (a TCP stream).
class FrameParser {
 public:
  explicit FrameParser(std::size_t max_payload_bytes = kMaxPayloadBytes);

  void feed(const char* data, std::size_t size);

  // The next complete frame, or nullopt until more bytes arrive. Throws ProtocolError as
  // soon as a length prefix exceeds the bound, before any of its payload is buffered.
  std::optional<Frame> next();

  // Changes the bound for the frames not yet returned (the server raises it after the
  // handshake).
  void set_max_payload_bytes(std::size_t max_payload_bytes) {
    max_payload_bytes_ = max_payload_bytes;
  }

  // Bytes fed but not yet returned as frames.
  std::size_t buffered_bytes() const { return buffer_.size() - consumed_; }

 private:
  std::size_t max_payload_bytes_;
  std::string buffer_;
  std::size_t consumed_ = 0;  // bytes at the front of buffer_ already returned
};

}  // namespace zt::comm::protocol

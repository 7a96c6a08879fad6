// The store protocol's encoder, decoder and frame parser (Note [Store protocol, version 1]).
// Integers are written and read byte by byte, least significant first.
#include "comm/store/store_protocol.h"

#include <type_traits>

namespace zt::comm::protocol {
namespace {

// Appends little-endian fields to a frame; finish() fills in the length prefix.
class Writer {
 public:
  explicit Writer(std::uint8_t op) {
    out_.resize(kHeaderBytes);
    out_[4] = static_cast<char>(op);
  }

  template <typename T>
  void put_int(T value) {
    static_assert(std::is_integral_v<T>);
    auto bits = static_cast<std::make_unsigned_t<T>>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_.push_back(static_cast<char>(bits & 0xFFu));
      bits = static_cast<decltype(bits)>(bits >> 8);
    }
  }

  void put_string(std::string_view what, std::string_view s, std::size_t max_bytes) {
    if (s.size() > max_bytes) {
      throw CommError(std::string(what) + " of " + std::to_string(s.size()) +
                      " bytes exceeds the store protocol's limit of " + std::to_string(max_bytes) +
                      " bytes");
    }
    put_int(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
  }

  std::string finish() && {
    std::uint32_t length = static_cast<std::uint32_t>(out_.size() - kHeaderBytes);
    for (std::size_t i = 0; i < 4; ++i) {
      out_[i] = static_cast<char>(length & 0xFFu);
      length >>= 8;
    }
    return std::move(out_);
  }

 private:
  std::string out_;
};

// Reads little-endian fields from a payload; every shortfall is a ProtocolError.
class Reader {
 public:
  Reader(std::uint8_t op, std::string_view payload) : op_(op), in_(payload) {}

  template <typename T>
  T get_int() {
    static_assert(std::is_integral_v<T>);
    need(sizeof(T), "integer");
    std::make_unsigned_t<T> bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      const auto byte = static_cast<std::make_unsigned_t<T>>(static_cast<unsigned char>(in_[i]));
      bits = static_cast<decltype(bits)>(bits | static_cast<decltype(bits)>(byte << (8 * i)));
    }
    in_.remove_prefix(sizeof(T));
    return static_cast<T>(bits);
  }

  std::string get_string(std::string_view what, std::size_t max_bytes) {
    const auto size = get_int<std::uint32_t>();
    if (size > max_bytes) {
      fail(std::string(what) + " of " + std::to_string(size) + " bytes exceeds the limit of " +
           std::to_string(max_bytes));
    }
    need(size, what);
    std::string s(in_.substr(0, size));
    in_.remove_prefix(size);
    return s;
  }

  std::vector<std::string> get_keys() {
    const auto count = get_int<std::uint32_t>();
    // Each key takes at least its 4-byte size, so a count the payload cannot hold is bogus
    // and must not reach reserve().
    if (count > kMaxWaitKeys || count > in_.size() / 4) fail("key count " + std::to_string(count));
    std::vector<std::string> keys;
    keys.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) keys.push_back(get_string("key", kMaxKeyBytes));
    return keys;
  }

  void finish() const {
    if (!in_.empty()) fail(std::to_string(in_.size()) + " unexpected trailing bytes");
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw ProtocolError("store protocol: malformed " + std::string(op_name(op_)) +
                        " frame: " + what);
  }

 private:
  void need(std::size_t bytes, std::string_view what) const {
    if (in_.size() < bytes) fail("truncated " + std::string(what));
  }

  std::uint8_t op_;
  std::string_view in_;
};

constexpr std::uint8_t op_byte(Op op) { return static_cast<std::uint8_t>(op); }

std::string to_hex(std::uint8_t byte) {
  constexpr char kDigits[] = "0123456789abcdef";
  return {kDigits[byte >> 4], kDigits[byte & 0xF]};
}

void encode_fields(Writer& w, const HandshakeRequest& r) {
  w.put_int(r.magic);
  w.put_int(r.version);
  w.put_string("token", r.token, kMaxTokenBytes);
}
void encode_fields(Writer& w, const SetRequest& r) {
  w.put_string("key", r.key, kMaxKeyBytes);
  w.put_string("value", r.value, kMaxValueBytes);
}
void encode_fields(Writer& w, const TryGetRequest& r) { w.put_string("key", r.key, kMaxKeyBytes); }
void encode_fields(Writer& w, const GetRequest& r) {
  w.put_string("key", r.key, kMaxKeyBytes);
  w.put_int(r.timeout_ms);
}
void encode_fields(Writer& w, const AddRequest& r) {
  w.put_string("key", r.key, kMaxKeyBytes);
  w.put_int(r.delta);
}
void encode_fields(Writer& w, const CompareSetRequest& r) {
  w.put_string("key", r.key, kMaxKeyBytes);
  w.put_string("expected value", r.expected, kMaxValueBytes);
  w.put_string("desired value", r.desired, kMaxValueBytes);
}
void encode_fields(Writer& w, const DeleteRequest& r) { w.put_string("key", r.key, kMaxKeyBytes); }
void encode_fields(Writer& w, const WaitRequest& r) {
  if (r.keys.size() > kMaxWaitKeys) {
    throw CommError("a wait for " + std::to_string(r.keys.size()) +
                    " keys exceeds the store protocol's limit of " + std::to_string(kMaxWaitKeys));
  }
  w.put_int(static_cast<std::uint32_t>(r.keys.size()));
  for (const auto& key : r.keys) w.put_string("key", key, kMaxKeyBytes);
  w.put_int(r.timeout_ms);
}

// The op byte of each request type, in the order of the Request variant.
constexpr Op kRequestOps[] = {Op::kHandshake, Op::kSet,        Op::kTryGet, Op::kGet,
                              Op::kAdd,       Op::kCompareSet, Op::kDelete, Op::kWait};
static_assert(std::size(kRequestOps) == std::variant_size_v<Request>);

}  // namespace

std::string_view op_name(std::uint8_t op) {
  switch (op) {
    case op_byte(Op::kHandshake):
      return "handshake";
    case op_byte(Op::kSet):
      return "set";
    case op_byte(Op::kTryGet):
      return "try_get";
    case op_byte(Op::kGet):
      return "get";
    case op_byte(Op::kAdd):
      return "add";
    case op_byte(Op::kCompareSet):
      return "compare_set";
    case op_byte(Op::kDelete):
      return "delete";
    case op_byte(Op::kWait):
      return "wait";
    default:
      return op >= 0x80 ? "reply" : "unknown-op";
  }
}

std::string encode_request(const Request& request) {
  Writer w(op_byte(kRequestOps[request.index()]));
  std::visit([&w](const auto& r) { encode_fields(w, r); }, request);
  return std::move(w).finish();
}

std::string encode_response(const Response& response) {
  Writer w(static_cast<std::uint8_t>(response.kind));
  switch (response.kind) {
    case Reply::kOk:
    case Reply::kNotFound:
      break;
    case Reply::kValue:
      w.put_string("value", response.text, kMaxValueBytes);
      break;
    case Reply::kError:
      w.put_string("message", response.text, kMaxValueBytes);
      break;
    case Reply::kCounter:
      w.put_int(response.number);
      break;
    case Reply::kDeleted:
      w.put_int(static_cast<std::uint8_t>(response.number != 0));
      break;
    case Reply::kTimedOut:
      w.put_int(static_cast<std::uint32_t>(response.keys.size()));
      for (const auto& key : response.keys) w.put_string("key", key, kMaxKeyBytes);
      break;
  }
  return std::move(w).finish();
}

Request decode_request(const Frame& frame) {
  Reader r(frame.op, frame.payload);
  Request request;
  switch (static_cast<Op>(frame.op)) {
    case Op::kHandshake: {
      HandshakeRequest h;
      h.magic = r.get_int<std::uint32_t>();
      h.version = r.get_int<std::uint16_t>();
      h.token = r.get_string("token", kMaxTokenBytes);
      request = std::move(h);
      break;
    }
    case Op::kSet: {
      std::string key = r.get_string("key", kMaxKeyBytes);
      request = SetRequest{std::move(key), r.get_string("value", kMaxValueBytes)};
      break;
    }
    case Op::kTryGet:
      request = TryGetRequest{r.get_string("key", kMaxKeyBytes)};
      break;
    case Op::kGet: {
      std::string key = r.get_string("key", kMaxKeyBytes);
      request = GetRequest{std::move(key), r.get_int<std::uint64_t>()};
      break;
    }
    case Op::kAdd: {
      std::string key = r.get_string("key", kMaxKeyBytes);
      request = AddRequest{std::move(key), r.get_int<std::int64_t>()};
      break;
    }
    case Op::kCompareSet: {
      CompareSetRequest c;
      c.key = r.get_string("key", kMaxKeyBytes);
      c.expected = r.get_string("expected value", kMaxValueBytes);
      c.desired = r.get_string("desired value", kMaxValueBytes);
      request = std::move(c);
      break;
    }
    case Op::kDelete:
      request = DeleteRequest{r.get_string("key", kMaxKeyBytes)};
      break;
    case Op::kWait: {
      std::vector<std::string> keys = r.get_keys();
      request = WaitRequest{std::move(keys), r.get_int<std::uint64_t>()};
      break;
    }
    default:
      throw ProtocolError("store protocol: unknown request op 0x" + to_hex(frame.op));
  }
  r.finish();
  return request;
}

Response decode_response(const Frame& frame) {
  Reader r(frame.op, frame.payload);
  Response response;
  response.kind = static_cast<Reply>(frame.op);
  switch (response.kind) {
    case Reply::kOk:
    case Reply::kNotFound:
      break;
    case Reply::kValue:
      response.text = r.get_string("value", kMaxValueBytes);
      break;
    case Reply::kError:
      response.text = r.get_string("message", kMaxValueBytes);
      break;
    case Reply::kCounter:
      response.number = r.get_int<std::int64_t>();
      break;
    case Reply::kDeleted: {
      const auto existed = r.get_int<std::uint8_t>();
      if (existed > 1) r.fail("flag " + std::to_string(existed));
      response.number = existed;
      break;
    }
    case Reply::kTimedOut:
      response.keys = r.get_keys();
      break;
    default:
      throw ProtocolError("store protocol: unknown reply op 0x" + to_hex(frame.op));
  }
  r.finish();
  return response;
}

}  // namespace zt::comm::protocol

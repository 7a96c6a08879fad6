// FrameParser: reassembles store protocol frames from a byte stream that arrives in
// arbitrary pieces, rejecting an oversized length prefix before buffering its payload.
#include "comm/store/store_protocol.h"

namespace zt::comm::protocol {

FrameParser::FrameParser(std::size_t max_payload_bytes) : max_payload_bytes_(max_payload_bytes) {}

void FrameParser::feed(const char* data, std::size_t size) {
  // Drop consumed bytes once they dominate, so the buffer stays about one frame long
  // without shifting memory on every frame.
  if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  buffer_.append(data, size);
}

std::optional<Frame> FrameParser::next() {
  const std::size_t available = buffer_.size() - consumed_;
  if (available < 4) return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffer_.data() + consumed_);
  const std::size_t length =
      static_cast<std::size_t>(bytes[0]) | static_cast<std::size_t>(bytes[1]) << 8 |
      static_cast<std::size_t>(bytes[2]) << 16 | static_cast<std::size_t>(bytes[3]) << 24;
  if (length > max_payload_bytes_) {
    throw ProtocolError("store protocol: frame of " + std::to_string(length) +
                        " bytes exceeds the limit of " + std::to_string(max_payload_bytes_));
  }
  if (available < kHeaderBytes + length) return std::nullopt;
  Frame frame;
  frame.op = bytes[4];
  frame.payload.assign(buffer_, consumed_ + kHeaderBytes, length);
  consumed_ += kHeaderBytes + length;
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  }
  return frame;
}

}  // namespace zt::comm::protocol

// What the backends' splits share: decoding the gathered (color, key) pairs, and the group
// name of a split's communicator. Private to comm/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace zt::comm {

// Rank r's request from pairs[2r] (color) and pairs[2r + 1] (key).
std::vector<SplitRequest> split_requests_from_pairs(const std::vector<std::int32_t>& pairs);

// "<parent>/split-<index>/color-<color>": unique per split and group, alike on every member.
std::string split_group_name(const std::string& parent_group_name, const SplitGroup& group);

}  // namespace zt::comm
